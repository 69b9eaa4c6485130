"""Starting the real server process and talking to it with the MCP SDK's client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

SERVER = [sys.executable, "-m", "arag_mcp.server"]
MODES = ["auto", "legacy"]


def stdio_client_for(index: Path, mode: str, *extra: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "arag_mcp.server", "--index", str(index), *extra]
    )
    return Client(stdio_client(params, errlog=sys.stderr), mode=mode)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def http_server(
    index: Path, transport: str, *extra: str, env: dict | None = None, host: str = "127.0.0.1"
) -> Iterator[str]:
    """Run `arag-mcp --transport TRANSPORT` on `host` and a free port; yield its base URL once healthy."""
    port = free_port()
    process = subprocess.Popen(
        [*SERVER, "--index", str(index), "--transport", transport, "--host", host, "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    base = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read().decode()
            try:
                if httpx2.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            _, stderr = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()  # a server stuck holding the GIL never runs its SIGTERM handler
            process.communicate()
            raise
        assert process.returncode in (0, -15), stderr.decode()


def http_client(base: str, transport: str, mode: str, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    if transport == "sse":
        return Client(sse_client(f"{base}/sse", headers=headers), mode=mode)
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60))
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode)
