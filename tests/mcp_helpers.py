"""Talking to the server with the MCP SDK's client: its HTTP app in process, or the real server process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO

import httpx2
from arag_mcp.server.app import create_server
from arag_mcp.server.http import build_app
from arag_mcp.server.search.live_index import LiveIndex
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp

SERVER = [sys.executable, "-m", "arag_mcp.server"]
MODES = ["auto", "legacy"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def http_server(
    index: Path,
    transport: str,
    *extra: str,
    env: dict | None = None,
    host: str = "127.0.0.1",
    log: list[str] | None = None,
    descriptors: int | None = None,
    server: list[str] = SERVER,
) -> Iterator[str]:
    """Run `arag-mcp --transport TRANSPORT` (the command `server`) on `host` and a free port; yield its
    base URL once healthy. Its stderr lines are added to `log` once it has stopped; `descriptors`
    starts it with that soft limit on open files, as a shell's `ulimit -Sn` would."""
    port = free_port()

    def limit_descriptors() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    stderr_file = tempfile.TemporaryFile()  # not a pipe: a server that logs a lot must never block on it
    process = subprocess.Popen(
        [*server, "--index", str(index), "--transport", transport, "--host", host, "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=stderr_file,
        env={**os.environ, **(env or {})},
        preexec_fn=limit_descriptors if descriptors else None,
    )
    base = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, _read(stderr_file)
            try:
                if httpx2.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.1)
        yield base
        if descriptors:
            limits = Path(f"/proc/{process.pid}/limits")
            if limits.exists():
                [line] = [line for line in limits.read_text().splitlines() if line.startswith("Max open files")]
                log_line = f"open files: {line.split()[3]} of {line.split()[4]}"
                if log is not None:
                    log.append(log_line)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()  # a server stuck holding the GIL never runs its SIGTERM handler
            process.wait()
            raise
        stderr = _read(stderr_file)
        if log is not None:
            log.extend(stderr.splitlines())
        assert process.returncode in (0, -15), stderr


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read().decode()


def http_client(base: str, transport: str, mode: str, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    if transport == "sse":
        return Client(sse_client(f"{base}/sse", headers=headers), mode=mode)
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60))
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode)


def app_for(live: LiveIndex, transport: str, host: str, token: str | None = None) -> ASGIApp:
    """The server's HTTP app over LIVE, as `arag-mcp --transport TRANSPORT --host HOST` serves it."""
    return build_app(create_server(live), transport, host, token, [])


@asynccontextmanager
async def asgi_client(app: ASGIApp, base_url: str = "http://test") -> AsyncIterator[httpx2.AsyncClient]:
    """An HTTP client calling the ASGI app in process, with the app's lifespan running."""
    starlette_app = app
    while not hasattr(starlette_app, "router"):  # inside the bearer-token and session middleware
        starlette_app = starlette_app.app
    async with starlette_app.router.lifespan_context(starlette_app):
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=base_url) as client:
            yield client


def asgi_mcp_client(http: httpx2.AsyncClient, mode: str = "auto") -> Client:
    """The MCP SDK's streamable-HTTP client over an in-process HTTP client from `asgi_client`."""
    return Client(streamable_http_client(f"{http.base_url}/mcp", http_client=http), mode=mode)


async def read_documents(client: Client) -> tuple[float, str]:
    """How long reading arag://documents (the documents table, read at every call) took, and its
    text or, where it failed, its one-line error."""
    started = time.monotonic()
    try:
        text = (await client.read_resource("arag://documents")).contents[0].text
    except MCPError as exc:
        text = str(exc)
    return time.monotonic() - started, text
