"""The attacks of issue 39 at the sizes they were measured at, against the real server process and
the real CLI: 10,000 `initialize` requests, 1,100 idle SSE streams under a 1,024-descriptor soft
limit, an HTML page behind a 10 MB <h1> and one nested 300 deep."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import httpx2
import pytest
from arag_mcp.indexer.index.snapshot import list_documents
from arag_mcp.server.http.sessions import BODY_SECONDS, MAX_SESSIONS_PER_CLIENT

from ..conftest import run_cli
from ..http_floods import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    LIST_TOOLS,
    body_that_never_comes,
    connected_from,
    ended_by_server,
    flood_addresses,
    from_address,
    held_sockets,
    open_sessions,
    sse_request,
    sse_session_id,
)
from ..mcp_helpers import http_client, http_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
HOST_PATIENCE = 30.0
"""How long a host keeps retrying a busy server before the test fails."""


async def call_as_a_host(base: str, transport: str) -> None:
    """A host that follows the rules: on a 503 it waits as Retry-After says and tries again, for at
    most HOST_PATIENCE seconds in all."""
    deadline = time.monotonic() + HOST_PATIENCE
    while True:
        try:
            async with http_client(base, transport, "legacy") as client:
                result = await client.call_tool("keyword_search", {"keywords": ["radium"]})
            break
        except Exception as exc:  # noqa: BLE001 - the SDK wraps the HTTP error in exception groups
            busy = _busy_answer(exc)
            if busy is None or time.monotonic() > deadline:
                raise
            await anyio.sleep(float(busy.headers.get("retry-after", "1")))
    assert not result.is_error, result.content[0].text


def _busy_answer(exc: BaseException) -> httpx2.Response | None:
    """The 503 response inside an error the client raised, or None."""
    if isinstance(exc, httpx2.HTTPStatusError) and exc.response.status_code == 503:
        return exc.response
    for inner in [*getattr(exc, "exceptions", ()), exc.__cause__, exc.__context__]:
        if inner is not None and inner is not exc and (found := _busy_answer(inner)) is not None:
            return found
    return None


async def test_ten_thousand_initialize_requests(sample_index: Path):
    log: list[str] = []
    with http_server(sample_index, "streamable-http", log=log) as base:
        async with httpx2.AsyncClient(base_url=base, timeout=60) as http:
            flood = await open_sessions(http, 10_000, parallel=20)
            assert {answer.status_code for answer in flood} == {200}
        await call_as_a_host(base, "streamable-http")
    assert len([line for line in log if "refused:" in line]) <= 3 and not any("Traceback" in line for line in log)


async def test_eleven_hundred_idle_sse_streams_under_a_1024_descriptor_limit(sample_index: Path):
    log: list[str] = []
    with http_server(sample_index, "sse", log=log, descriptors=1024) as base:
        with held_sockets(base, 1100, sse_request(base)) as streams:
            assert httpx2.get(f"{base}/health", timeout=10).status_code == 200
            await call_as_a_host(base, "sse")
            open_streams = streams
            for _ in range(30):  # the server works through its listen queue
                open_streams = [stream for stream in open_streams if not ended_by_server(stream, within=0.01)]
                if len(open_streams) <= MAX_SESSIONS_PER_CLIENT:
                    break
                time.sleep(1)
            assert len(open_streams) <= MAX_SESSIONS_PER_CLIENT
    assert not any("Too many open files" in line or "Traceback" in line for line in log), log[-5:]


def test_html_behind_a_10_mb_heading_or_300_deep(tmp_path: Path):
    corpus = tmp_path / "pages"
    corpus.mkdir()
    (corpus / "heading.html").write_text(f"<h1>{'x' * 10_000_000}</h1><p>Body text.</p>")
    (corpus / "deep.html").write_text("<div>" * 300 + "<p>Deep text about radium.</p>" + "</div>" * 300)
    index = tmp_path / "idx"
    built = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", str(index), "--quiet")
    assert built.returncode == 0, built.stderr
    assert (
        "skipped pages/heading.html: unreadable: the page holds 10,000,026 characters (limit 10,000,000)"
        in built.stderr
    )
    assert [document["source"] for document in list_documents(str(index))] == ["pages/deep.html"]


FLOOD_ADDRESSES = 16
NEWCOMER_SECONDS = 5.0
"""How soon a client on a fresh address must have initialized and searched during a flood."""
LOG_LINES_PER_MINUTE = 100
PING = {"jsonrpc": "2.0", "id": 9, "method": "ping"}


async def keep_a_session(http: httpx2.AsyncClient) -> None:
    """Open a session and call in it. Near the server's limit a session still in its handshake may be
    displaced by another address's (unused sessions go first): a flooder opens another."""
    for _ in range(5):
        opened = await http.post("/mcp", json=INITIALIZE, headers=HEADERS)
        if opened.status_code != 200:
            continue
        session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post("/mcp", json=INITIALIZED, headers=session)
        if (await http.post("/mcp", json=LIST_TOOLS, headers=session)).status_code == 200:
            return
    raise AssertionError("no session could be kept")


async def newcomer_seconds(base: str, transport: str) -> float:
    """Seconds a well-behaved client on 127.0.0.1 takes to initialize and search (no retries)."""
    started = time.monotonic()
    async with http_client(base, transport, "legacy") as client:
        result = await client.call_tool("keyword_search", {"keywords": ["radium"]})
    assert not result.is_error, result.content[0].text
    return time.monotonic() - started


def assert_quiet(log: list[str], minutes: float) -> None:
    assert len(log) <= LOG_LINES_PER_MINUTE * max(1.0, minutes), log[-20:]
    assert not any("Traceback" in line for line in log), [line for line in log if "Traceback" in line][:3]


async def test_sessions_kept_alive_from_many_addresses_do_not_lock_a_newcomer_out(sample_index: Path):
    """16 addresses x 32 sessions, each kept by a call: the server's whole budget of used sessions."""
    log: list[str] = []
    started = time.monotonic()
    with http_server(sample_index, "streamable-http", log=log) as base:
        for address in flood_addresses(FLOOD_ADDRESSES):  # one address after another: the budget fills exactly
            async with from_address(base, address) as http:
                for _ in range(MAX_SESSIONS_PER_CLIENT):
                    await keep_a_session(http)
        assert await newcomer_seconds(base, "streamable-http") < NEWCOMER_SECONDS
        assert httpx2.get(f"{base}/health", timeout=5).status_code == 200
    assert_quiet(log, (time.monotonic() - started) / 60)


async def test_sse_streams_kept_alive_from_many_addresses_do_not_lock_a_newcomer_out(sample_index: Path):
    """17 addresses x 32 SSE streams, each used by a ping: more than the server's 512 sessions."""
    log: list[str] = []
    started = time.monotonic()
    with http_server(sample_index, "sse", log=log) as base:
        streams = []
        try:
            for address in flood_addresses(FLOOD_ADDRESSES + 1):
                async with from_address(base, address) as http:
                    for _ in range(MAX_SESSIONS_PER_CLIENT):
                        stream = connected_from(base, address, sse_request(base))
                        streams.append(stream)
                        answer = await http.post(f"/messages/?session_id={sse_session_id(stream)}", json=PING)
                        assert answer.status_code == 202, answer.text
            assert await newcomer_seconds(base, "sse") < NEWCOMER_SECONDS
            assert sum(ended_by_server(stream, within=0.01) for stream in streams) >= MAX_SESSIONS_PER_CLIENT
        finally:
            for stream in streams:
                stream.close()
    assert_quiet(log, (time.monotonic() - started) / 60)


async def test_posts_whose_body_never_comes_from_many_addresses_do_not_lock_a_newcomer_out(sample_index: Path):
    """4 addresses x 230 POSTs that send their headers and never their body: more than the 900
    requests the server takes in flight. Each is answered 408 once the body deadline passes."""
    log: list[str] = []
    started = time.monotonic()
    with http_server(sample_index, "streamable-http", log=log) as base:
        held = [
            connected_from(base, address, body_that_never_comes(base))
            for address in flood_addresses(4)
            for _ in range(230)
        ]
        try:
            await anyio.sleep(1)  # the server takes them in
            assert httpx2.get(f"{base}/health", timeout=5).status_code == 503  # it is refusing the flood's excess
            assert await newcomer_seconds(base, "streamable-http") < NEWCOMER_SECONDS
            time.sleep(BODY_SECONDS + 1)
            answered = [ended_by_server(sock, within=0.5) for sock in held]
            assert all(answered), answered.count(False)
        finally:
            for sock in held:
                sock.close()
    assert_quiet(log, (time.monotonic() - started) / 60)
