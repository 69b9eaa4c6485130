"""Floods a real arag-mcp HTTP server as an attacker would, scaled by the caller: `initialize`
requests that never call, SSE streams held open, sockets that never finish their headers."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import anyio
import httpx2

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def open_sessions(
    http: httpx2.AsyncClient, count: int, call: bool = False, parallel: int = 1
) -> list[httpx2.Response]:
    """`count` streamable-HTTP sessions opened `parallel` at a time, each making a call when `call`;
    the answers to their `initialize`, in the order they were sent."""
    answers: list[httpx2.Response] = []
    gate = anyio.Semaphore(parallel)

    async def open_one() -> None:
        async with gate:
            opened = await http.post("/mcp", json=INITIALIZE, headers=HEADERS)
            answers.append(opened)
            if call and opened.status_code == 200:
                session = {
                    **HEADERS,
                    "mcp-session-id": opened.headers["mcp-session-id"],
                    "mcp-protocol-version": "2025-06-18",
                }
                await http.post("/mcp", json=INITIALIZED, headers=session)
                assert (await http.post("/mcp", json=LIST_TOOLS, headers=session)).status_code == 200

    if parallel == 1:
        for _ in range(count):
            await open_one()
        return answers
    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(open_one)
    return answers


async def session_alive(http: httpx2.AsyncClient, session_id: str) -> bool:
    headers = {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"}
    return (await http.post("/mcp", json=LIST_TOOLS, headers=headers)).status_code == 200


@contextmanager
def held_sockets(base: str, count: int, request: bytes) -> Iterator[list[socket.socket]]:
    """`count` sockets to the server that sent `request` (perhaps unfinished) and are held open."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    sockets = []
    try:
        for _ in range(count):
            sock = socket.create_connection((host, int(port)))
            sock.sendall(request)
            sockets.append(sock)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def ended_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server ended what `sock` asked for within `within` seconds: closed the socket, or
    ended a chunked answer (an SSE stream) and keeps the connection only as long as keep-alive lasts."""
    sock.settimeout(within)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
            if received.endswith(b"\r\n0\r\n\r\n"):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


def which_ended_by_server(socks: list[socket.socket], within: float) -> list[bool]:
    """`ended_by_server` of each socket, all waited for at once: `within` seconds in all, not each."""
    with ThreadPoolExecutor(max_workers=max(1, len(socks))) as waiting:
        return list(waiting.map(lambda sock: ended_by_server(sock, within), socks))


def sse_request(base: str) -> bytes:
    return f"GET /sse HTTP/1.1\r\nHost: {base.removeprefix('http://')}\r\nAccept: text/event-stream\r\n\r\n".encode()


async def wait_until(check, seconds: float) -> bool:  # noqa: ANN001 - an async predicate
    with anyio.move_on_after(seconds):
        while not await check():
            await anyio.sleep(0.1)
        return True
    return False


def flood_addresses(count: int) -> list[str]:
    """Loopback addresses other than 127.0.0.1 (every 127/8 address reaches a server on 127.0.0.1)."""
    return [f"127.0.0.{2 + number}" for number in range(count)]


def from_address(base: str, address: str) -> httpx2.AsyncClient:
    """An HTTP client whose connections come from `address`."""
    return httpx2.AsyncClient(base_url=base, timeout=60, transport=httpx2.AsyncHTTPTransport(local_address=address))


def connected_from(base: str, address: str, request: bytes) -> socket.socket:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), source_address=(address, 0))
    sock.sendall(request)
    return sock


def sse_session_id(sock: socket.socket) -> str:
    """The session id an SSE stream announces in its first event."""
    received = b""
    sock.settimeout(30)
    while (found := re.search(rb"session_id=([0-9a-fA-F]+)\r?\n", received)) is None:
        chunk = sock.recv(65536)
        assert chunk, "the stream ended before it named its session"
        received += chunk
    return found[1].decode()


def body_that_never_comes(base: str) -> bytes:
    host = base.removeprefix("http://")
    return (
        f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 4096\r\n\r\n{"
    ).encode()
