"""The real server over streamable HTTP and SSE: concurrent conversations keep separate read sets."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest
from arag_mcp.indexer.index.ids import doc_key

from .conftest import run_cli
from .mcp_helpers import MODES, http_client, http_server

pytestmark = pytest.mark.anyio
RADIUM = f"{doc_key('radium')}-0"


async def read_twice(base: str, transport: str, mode: str, chunk: str, results: dict) -> None:
    """One client conversation: search, read a chunk, read it again; record what it saw."""
    async with http_client(base, transport, mode) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["pitchblende"]})
        conversation = found.structured_content["conversation"]
        arguments = {"chunk_ids": [chunk], "conversation": conversation}
        first = await client.call_tool("chunk_read", arguments)
        await anyio.sleep(0.2)  # let the other conversation read in between
        second = await client.call_tool("chunk_read", arguments)
        results[chunk] = (
            conversation,
            first.structured_content["chunks"][0]["status"],
            second.structured_content["chunks"][0]["status"],
        )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_concurrent_conversations_have_isolated_dedup(sample_index: Path, transport: str, mode: str):
    with http_server(sample_index, transport) as base:
        results: dict = {"one": {}, "two": {}}
        # Both conversations read the same chunk at once: each sees it fresh first, then as read before.
        async with anyio.create_task_group() as group:
            for name in results:
                group.start_soon(read_twice, base, transport, mode, RADIUM, results[name])
        for name in ("one", "two"):
            conversation, first, second = results[name][RADIUM]
            assert (first, second) == ("ok", "read_before"), (transport, mode, results)
        handles = {results[name][RADIUM][0] for name in ("one", "two")}
        assert len(handles) == 2 and all(h.startswith("c-") for h in handles)


async def test_bearer_token_is_required_when_set(sample_index: Path):
    with http_server(sample_index, "streamable-http", "--auth-token", "sesame") as base:
        assert httpx2.get(f"{base}/health").status_code == 200
        denied = httpx2.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert denied.status_code == 401
        async with http_client(base, "streamable-http", "auto", token="sesame") as client:
            result = await client.call_tool("keyword_search", {"keywords": ["radium"]})
            assert not result.is_error


async def test_dns_rebinding_protection_on_loopback(sample_index: Path):
    with http_server(sample_index, "streamable-http") as base:
        response = httpx2.post(
            f"{base}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
        )
        assert response.status_code == 421


def test_non_loopback_bind_needs_a_token(sample_index: Path):
    result = run_cli(
        "arag_mcp.server", "--index", str(sample_index), "--transport", "sse", "--host", "0.0.0.0", timeout=60
    )
    assert result.returncode == 2 and "--auth-token" in result.stderr and "Traceback" not in result.stderr
