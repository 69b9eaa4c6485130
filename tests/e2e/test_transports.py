"""The real server process, once per transport (stdio, SSE, streamable HTTP), and answering while a call holds the GIL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.indexes import Index

from ..mcp_helpers import MODES, http_client, http_server
from ..test_http_security import ACCEPT, ENDPOINTS, PING

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
RADIUM = f"{doc_key('radium')}-0"


def test_stdout_carries_only_protocol(sample_index: Path):
    """Raw JSON-RPC over the process's pipes: every stdout line parses as a JSON-RPC message."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "semantic_search", "arguments": {"query": "radium"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "keyword_search", "arguments": {"keywords": ["radium"]}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "arag_mcp.server", "--index", str(sample_index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    replies = []
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        if "id" in message:
            replies.append(json.loads(process.stdout.readline()))
    process.stdin.close()
    rest = process.stdout.read()
    stderr = process.stderr.read()
    assert process.wait(timeout=60) == 0
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert all(reply["jsonrpc"] == "2.0" and "result" in reply for reply in replies)
    assert "A-RAG" in replies[0]["result"]["instructions"]
    assert all(json.loads(line) for line in rest.splitlines() if line.strip())
    assert "embedding model" in stderr


async def read_twice(base: str, transport: str, mode: str, chunk: str, results: dict) -> None:
    """One client conversation: read a chunk (its first call starts the conversation), read it
    again; record what it saw."""
    async with http_client(base, transport, mode) as client:
        first = await client.call_tool("chunk_read", {"chunk_ids": [chunk]})
        conversation = first.structured_content["conversation"]
        await anyio.sleep(0.2)  # let the other conversation read in between
        second = await client.call_tool("chunk_read", {"chunk_ids": [chunk], "conversation": conversation})
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


@pytest.mark.parametrize("transport", sorted(ENDPOINTS))
async def test_server_on_another_loopback_address_checks_host_and_origin(sample_index: Path, transport: str):
    with http_server(sample_index, transport, host="127.0.0.2") as url:
        endpoint = ENDPOINTS[transport]
        assert httpx2.post(f"{url}{endpoint}", json=PING, headers={**ACCEPT, "Host": "evil.example"}).status_code == 421
        origin = {**ACCEPT, "Origin": "http://evil.example"}
        assert httpx2.post(f"{url}{endpoint}", json=PING, headers=origin).status_code == 403
        async with http_client(url, transport, "auto") as client:
            assert not (await client.call_tool("keyword_search", {"keywords": ["radium"]})).is_error


@pytest.fixture(scope="module")
def long_name_index(tmp_path_factory) -> Path:
    """An index holding a file whose name is 200 characters long."""
    folder = tmp_path_factory.mktemp("long-name")
    (folder / "docs").mkdir()
    (folder / "docs" / ("a" * 200 + ".md")).write_text("# Long\n\nThe harbour pump moves water out of the dock.")
    (folder / "docs" / "short.md").write_text("# Short\n\nThe crane lifts boats out of the water.")
    Index(str(folder / "idx")).add([folder / "docs"], BuildOptions(progress=False))
    return folder / "idx"


async def test_a_hostile_source_pattern_does_not_stall_the_server(long_name_index: Path):
    """'?*' runs backtrack in Python's re for hours against a long name, holding the GIL: while one
    is matched, the server must still answer /health, and the call itself must end."""
    with http_server(long_name_index, "streamable-http") as base:
        async with http_client(base, "streamable-http", "auto") as client:
            results = {}

            async def call(name: str, scope: dict) -> None:
                results[name] = await client.call_tool("keyword_search", {"keywords": ["pump"], "scope": scope})

            with anyio.fail_after(5):
                async with anyio.create_task_group() as group:
                    group.start_soon(call, "backtracking", {"source": "?*" * 6 + "z"})
                    await anyio.sleep(0.2)
                    async with httpx2.AsyncClient(timeout=4) as http:
                        assert (await http.get(f"{base}/health")).status_code == 200
                    group.start_soon(call, "wildcards", {"source": "?*" * 20 + "z"})
                    group.start_soon(call, "conditions", {f"field{i}": "x" for i in range(2000)})
            expected = {
                "backtracking": 'scope "source" "?*?*?*?*?*?*z" matches no document',
                "wildcards": "has 40 wildcards; use at most 12",
                "conditions": "the scope has 2000 conditions; give at most 20",
            }
            for name, text in expected.items():
                message = results[name].content[0].text
                assert results[name].is_error and text in message and "\n" not in message, message
            matched = await client.call_tool("keyword_search", {"keywords": ["pump"], "scope": {"source": "a*a.md"}})
            assert matched.structured_content["source"] == f"docs/{'a' * 200}.md", matched.content[0].text
