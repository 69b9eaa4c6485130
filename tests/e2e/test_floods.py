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
from arag_mcp.server.http.sessions import MAX_SESSIONS_PER_CLIENT

from ..conftest import run_cli
from ..http_floods import ended_by_server, held_sockets, open_sessions, sse_request
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
