"""The real `arag-mcp` process over stdio, driven by the MCP SDK's client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from arag_mcp.indexer.build import BuildOptions, build_index
from arag_mcp.indexer.ids import doc_key

from .conftest import run_cli
from .mcp_helpers import MODES, stdio_client_for

pytestmark = pytest.mark.anyio
RADIUM = f"{doc_key('radium')}-0"


@pytest.mark.parametrize("mode", MODES)
async def test_tools_are_listed_as_the_paper_describes(sample_index: Path, mode: str):
    async with stdio_client_for(sample_index, mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"keyword_search", "semantic_search", "chunk_read"}
        for name, tool in tools.items():
            assert tool.annotations.read_only_hint is True
            assert tool.annotations.open_world_hint is False
            assert tool.output_schema and tool.title
        assert tools["keyword_search"].annotations.idempotent_hint is True
        assert tools["chunk_read"].annotations.idempotent_hint is False
        assert "GOOD" in tools["keyword_search"].description and "BAD" in tools["keyword_search"].description
        assert "read before" in tools["chunk_read"].description
        assert "chunk_read" in tools["semantic_search"].description
        schema = tools["keyword_search"].input_schema["properties"]
        assert schema["top_k"]["minimum"] == 1 and schema["top_k"]["maximum"] == 20
        prompts = (await client.list_prompts()).prompts
        assert [prompt.name for prompt in prompts] == ["arag"]


@pytest.mark.parametrize("mode", MODES)
async def test_search_read_and_dedup_in_one_session(sample_index: Path, mode: str):
    async with stdio_client_for(sample_index, mode) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["pitchblende"], "top_k": 3})
        assert not found.is_error
        [hit] = found.structured_content["results"]
        assert hit["chunk_id"] == RADIUM and hit["title"] == "Radium"
        assert hit["score"] == len("pitchblende")
        assert "pitchblende" in hit["snippet"]
        assert RADIUM in found.content[0].text and "pitchblende" in found.content[0].text

        semantic = await client.call_tool("semantic_search", {"query": "Which element glows faintly blue?", "top_k": 2})
        assert not semantic.is_error, semantic.content[0].text
        assert semantic.structured_content["results"][0]["chunk_id"] == RADIUM
        assert any("blue" in s for s in semantic.structured_content["results"][0]["sentences"])

        first = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM]})
        [chunk] = first.structured_content["chunks"]
        assert chunk["status"] == "ok" and chunk["text"].startswith("Radium is a chemical element")
        assert chunk["text"] in first.content[0].text

        again = await client.call_tool("chunk_read", {"chunk_ids": RADIUM})
        assert again.structured_content["chunks"] == [
            {
                "chunk_id": RADIUM,
                "status": "read_before",
                "title": None,
                "source": None,
                "text": None,
                "previous_chunk_id": None,
                "next_chunk_id": None,
            }
        ]
        assert "This chunk has been read before" in again.content[0].text
        assert "Radium is a chemical element" not in again.content[0].text

    async with stdio_client_for(sample_index, mode) as client:
        fresh = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM]})
        assert fresh.structured_content["chunks"][0]["status"] == "ok"


async def test_unknown_and_duplicate_ids(sample_index: Path):
    async with stdio_client_for(sample_index, "auto") as client:
        result = await client.call_tool("chunk_read", {"chunk_ids": ["nonsense", RADIUM, RADIUM, "aaaaaaaaaa-9"]})
        assert not result.is_error
        statuses = [(c["chunk_id"], c["status"]) for c in result.structured_content["chunks"]]
        assert statuses == [("nonsense", "not_found"), (RADIUM, "ok"), ("aaaaaaaaaa-9", "not_found")]
        assert "no such chunk" in result.content[0].text


BAD_CALLS = [
    ("keyword_search", {"keywords": []}, "keywords is empty"),
    ("keyword_search", {"keywords": ["   "]}, "keywords is empty"),
    ("keyword_search", {"keywords": [" ".join(["word"] * 40)]}, "40-word sentence"),
    ("keyword_search", {"keywords": ["radium"], "top_k": 0}, "top_k must be a whole number from 1 to 20; got 0"),
    ("keyword_search", {"keywords": ["radium"], "top_k": 21}, "got 21"),
    ("keyword_search", {"keywords": ["radium"], "top_k": -1}, "got -1"),
    ("keyword_search", {"keywords": ["radium"], "top_k": "five"}, 'got "five"'),
    ("keyword_search", {}, "keywords must be a list of short terms"),
    ("semantic_search", {"query": ""}, "query is empty"),
    ("semantic_search", {"query": "x" * 10_000}, "10000 characters"),
    ("semantic_search", {"query": "radium", "top_k": 21}, "top_k must be"),
    ("chunk_read", {"chunk_ids": []}, "chunk_ids is empty"),
    ("chunk_read", {"chunk_ids": [f"{doc_key('x')}-{i}" for i in range(1000)]}, "holds 1000 ids"),
    ("chunk_read", {"chunk_ids": 42}, "chunk_ids must be a list"),
]


async def test_bad_input_gets_one_line_errors_and_the_session_keeps_working(sample_index: Path):
    async with stdio_client_for(sample_index, "auto") as client:
        for tool, arguments, expected in BAD_CALLS:
            result = await client.call_tool(tool, arguments)
            text = result.content[0].text
            assert result.is_error, (tool, arguments)
            assert expected in text, (tool, text)
            assert "\n" not in text and "Traceback" not in text and len(text) < 300, text
        works = await client.call_tool("keyword_search", {"keyword": "pitchblende", "top_k": "3"})
        assert not works.is_error and works.structured_content["results"][0]["chunk_id"] == RADIUM


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


def test_missing_or_foreign_index_is_refused_before_serving(tmp_path: Path):
    result = run_cli("arag_mcp.server", "--index", str(tmp_path / "nowhere"), timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "--index" in result.stderr and "does not exist" in result.stderr
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("not an index")
    result = run_cli("arag_mcp.server", "--index", str(tmp_path / "foreign"), timeout=60)
    assert result.returncode == 2 and "not an arag-mcp index" in result.stderr and "Traceback" not in result.stderr


def test_call_from_terminal(sample_index: Path):
    result = run_cli(
        "arag_mcp.server", "--index", str(sample_index), "--call", "keyword_search", "keywords=pitchblende", timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert RADIUM in result.stdout and "pitchblende" in result.stdout
    result = run_cli(
        "arag_mcp.server", "--index", str(sample_index), "--call", "chunk_read", '{"chunk_ids": []}', timeout=120
    )
    assert result.returncode == 1 and "chunk_ids is empty" in result.stderr


async def test_chunk_read_is_bounded_and_names_what_it_held_back(tmp_path: Path):
    corpus = tmp_path / "long.jsonl"
    sentence = "The archive keeps letters, maps and ledgers from the old harbour office for later study. "
    with corpus.open("w") as handle:
        for number in range(12):
            handle.write(json.dumps({"id": f"doc{number}", "title": f"Doc {number}", "text": sentence * 50}) + "\n")
    index = tmp_path / "idx"
    build_index([corpus], str(index), BuildOptions(progress=False))
    ids = [f"{doc_key(f'doc{number}')}-0" for number in range(12)]
    async with stdio_client_for(index, "auto") as client:
        result = await client.call_tool("chunk_read", {"chunk_ids": ids})
        chunks = result.structured_content["chunks"]
        sent = [c["chunk_id"] for c in chunks if c["status"] == "ok"]
        held_back = [c["chunk_id"] for c in chunks if c["status"] == "not_sent"]
        assert sent and held_back and sent + held_back == ids
        assert sum(len(c["text"]) for c in chunks if c["status"] == "ok") <= 40_000
        assert all(cid in result.content[0].text for cid in held_back)
        assert "call chunk_read again" in result.content[0].text
        rest = await client.call_tool("chunk_read", {"chunk_ids": held_back})
        assert [c["status"] for c in rest.structured_content["chunks"]] == ["ok"] * len(held_back)
