"""Floods against the real server process, scaled down from what an attacker sends (10,000
`initialize` requests, 1,100 held SSE streams, sockets that never finish their headers): a client
that follows the rules still connects and calls its tools, refusals are 503 with Retry-After, and
the log counts refusals instead of printing each."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from arag_mcp.server.http.sessions import MAX_SESSIONS_PER_CLIENT, RETRY_AFTER_SECONDS

from .http_floods import (
    ended_by_server,
    held_sockets,
    open_sessions,
    session_alive,
    sse_request,
    which_ended_by_server,
)
from .mcp_helpers import http_client, http_server

pytestmark = pytest.mark.anyio
FLOOD = 3 * MAX_SESSIONS_PER_CLIENT
HEADER_DEADLINE = 4.0
"""The header deadline of the slow-loris test's server: HEADER_SECONDS (10 s) lowered in its process."""
SERVER_WITH_HEADER_DEADLINE = [
    sys.executable,
    "-c",
    "import sys\n"
    "from arag_mcp.server.http import header_deadline\n"
    f"header_deadline.HEADER_SECONDS = {HEADER_DEADLINE}\n"
    "from arag_mcp.server.cli import main\n"
    "sys.exit(main())\n",
]


async def call_as_a_host(base: str, transport: str) -> None:
    async with http_client(base, transport, "legacy") as client:
        result = await client.call_tool("keyword_search", {"keywords": ["radium"]})
        assert not result.is_error, result.content[0].text


async def test_an_initialize_flood_does_not_lock_a_host_out(hashed_sample_index: Path):
    with http_server(hashed_sample_index, "streamable-http") as base:
        async with httpx2.AsyncClient(base_url=base, timeout=30) as http:
            flood = await open_sessions(http, FLOOD)
            assert [answer.status_code for answer in flood] == [200] * FLOOD
            await call_as_a_host(base, "streamable-http")
            ids = [answer.headers["mcp-session-id"] for answer in flood]
            alive = [await session_alive(http, session_id) for session_id in ids]
            assert alive.count(True) < MAX_SESSIONS_PER_CLIENT and not any(alive[: FLOOD - MAX_SESSIONS_PER_CLIENT])


async def test_sessions_that_made_calls_are_kept_and_the_next_is_refused_with_retry_after(hashed_sample_index: Path):
    log: list[str] = []
    with http_server(hashed_sample_index, "streamable-http", log=log) as base:
        async with httpx2.AsyncClient(base_url=base, timeout=30) as http:
            used = await open_sessions(http, MAX_SESSIONS_PER_CLIENT, call=True)
            refused = (await open_sessions(http, 1))[0]
            assert refused.status_code == 503 and refused.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
            assert "sessions in use from this address" in refused.text
            assert all([await session_alive(http, answer.headers["mcp-session-id"]) for answer in used])
            await open_sessions(http, 5)  # more refusals: counted, not logged each
    refusals = [line for line in log if "refused:" in line]
    assert refusals == ["arag-mcp WARNING refused: new session above the session limit (1 in the last 60 s)"]
    assert not any("Traceback" in line for line in log)


async def test_held_sse_streams_do_not_lock_a_host_out(hashed_sample_index: Path):
    """Started with a soft limit of 256 descriptors, as a shell may start it: raised to the hard one."""
    log: list[str] = []
    with http_server(hashed_sample_index, "sse", log=log, descriptors=256) as base:
        with held_sockets(base, FLOOD, sse_request(base)) as streams:
            await call_as_a_host(base, "sse")
            closed = which_ended_by_server(streams, within=0.2)
            assert closed.count(False) <= MAX_SESSIONS_PER_CLIENT and all(closed[: FLOOD - MAX_SESSIONS_PER_CLIENT])
            assert httpx2.get(f"{base}/health", timeout=5).status_code == 200
    [limits] = [line for line in log if line.startswith("open files:")]
    soft, hard = limits.removeprefix("open files: ").split(" of ")
    assert soft == hard != "256", limits
    closing = [line for line in log if "refused: unused session closed to make room" in line]
    assert len(closing) == 1 and not any("Traceback" in line for line in log), log


async def test_sockets_that_never_finish_their_headers_are_closed(hashed_sample_index: Path):
    with http_server(hashed_sample_index, "sse", server=SERVER_WITH_HEADER_DEADLINE) as base:
        with held_sockets(base, 5, b"GET /health HTTP/1.1\r\nX-Slow: 1\r\n") as slow:
            started = time.monotonic()
            for _ in range(3):  # a header line every second, as a slow-loris client sends them
                time.sleep(HEADER_DEADLINE / 4)
                assert not any(ended_by_server(sock, within=0.01) for sock in slow)
                for sock in slow:
                    sock.sendall(b"X-Slow: 1\r\n")
            time.sleep(max(0.0, started + HEADER_DEADLINE + 1 - time.monotonic()))
            assert all(ended_by_server(sock, within=1) for sock in slow)
            assert httpx2.get(f"{base}/health", timeout=5).status_code == 200


async def test_a_session_that_never_calls_is_closed_after_the_short_timeout(hashed_sample_index: Path):
    from arag_mcp.server.app import create_server
    from arag_mcp.server.http import build_app
    from arag_mcp.server.http.sessions import Limits

    from .conftest import live_index
    from .mcp_helpers import asgi_client

    with live_index(hashed_sample_index, load_model=False) as live:
        app = build_app(
            create_server(live), "streamable-http", "127.0.0.1", None, [], limits=Limits(unused_seconds=0.5)
        )
        async with asgi_client(app, "http://127.0.0.1:8000") as http:
            idle, working = await open_sessions(http, 1), await open_sessions(http, 1, call=True)
            await anyio.sleep(0.6)
            assert not await session_alive(http, idle[0].headers["mcp-session-id"])  # closed at the next request
            assert await session_alive(http, working[0].headers["mcp-session-id"])
