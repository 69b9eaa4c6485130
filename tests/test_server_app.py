"""The server as `arag-mcp` serves it, through the MCP SDK's in-memory client, and its command line (tool logic: test_tools.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.manifest import check_manifest
from arag_mcp.server.app import TOOLS, create_server
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from arag_mcp.server.tools.schemas import compact_schema
from mcp import Client

from .conftest import live_index, run_cli
from .mcp_helpers import MODES

pytestmark = pytest.mark.anyio
RADIUM = f"{doc_key('radium')}-0"
HEAVY = ("numpy", "pyarrow", "lancedb", "torch", "onnxruntime", "sentence_transformers")
"""What a server loads only after its handshake, on the thread that opens the index."""


@pytest.fixture(scope="module")
def live(hashed_sample_index: Path) -> Iterator[LiveIndex]:
    with live_index(hashed_sample_index) as live:
        yield live


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_each_profile_lists_exactly_its_tools_and_prompt(
    hashed_sample_index: Path, live: LiveIndex, profile: str
):
    expected = PROFILES[profile]
    collection = check_manifest(str(hashed_sample_index)).description
    async with Client(create_server(live, expected)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == expected.tool_names
        for tool, name in zip(expected.tools, expected.tool_names):
            assert tools[name].description == TOOLS[tool].described(expected, "word", collection)
            assert tools[name].title == TOOLS[tool].title
        assert [prompt.name for prompt in (await client.list_prompts()).prompts] == [expected.prompt_name]


@pytest.mark.parametrize("mode", MODES)
async def test_the_paper_tools(live: LiveIndex, mode: str):
    async with Client(create_server(live), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "GOOD" in tools["keyword_search"].description and "BAD" in tools["keyword_search"].description
        schema = tools["keyword_search"].input_schema["properties"]
        assert schema["top_k"]["minimum"] == 1 and schema["top_k"]["maximum"] == 20
        assert tools["keyword_search"].annotations.idempotent_hint is True
        assert tools["chunk_read"].annotations.idempotent_hint is False
        found = await client.call_tool("keyword_search", {"keywords": ["pitchblende"], "top_k": 3})
        assert found.structured_content["results"][0]["chunk_id"] == RADIUM
        assert found.structured_content["results"][0]["whole_chunk"] is True  # a short chunk: sent whole
        conversation = found.structured_content["conversation"]
        first = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM], "conversation": conversation})
        again = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM], "conversation": conversation})
        other = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM]})  # a second chat, same process
        other_conversation = other.structured_content["conversation"]
        other_again = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM], "conversation": other_conversation})
        statuses = [r.structured_content["chunks"][0]["status"] for r in (first, again, other, other_again)]
        assert statuses == ["read_before", "read_before", "ok", "read_before"] and other_conversation != conversation


LISTING_CHARS = 8_000
INSTRUCTIONS_CHARS = 800


async def test_the_default_listing_is_light_and_its_results_still_match_their_schemas(live: LiveIndex):
    """A host sends the listing with every turn: the default profile's tools/list (descriptions, input
    and output schemas) and the instructions stay small. The schemas keep what a client checks against
    (types, bounds, required fields, no unknown arguments); results still validate against them."""
    async with Client(create_server(live)) as client:
        tools = (await client.list_tools()).tools
        listed = [tool.model_dump(mode="json", exclude_none=True, by_alias=True) for tool in tools]
        assert len(json.dumps(listed)) <= LISTING_CHARS, len(json.dumps(listed))
        assert len(client.instructions) <= INSTRUCTIONS_CHARS, client.instructions
        assert "one page (all chunks of one title; a JSONL record is one chunk)" in client.instructions
        for tool in listed:
            text = json.dumps(tool)
            assert '"title": "' not in text.replace(f'"title": "{tool["title"]}"', ""), tool["name"]
            assert '"type": "null"' not in text, tool["name"]
            assert tool["inputSchema"]["additionalProperties"] is False
        schemas = {tool.name: tool for tool in tools}
        assert schemas["keyword_search"].input_schema["properties"]["top_k"]["maximum"] == 20
        for name, arguments in (
            ("keyword_search", {"keywords": ["radium", "Marie Curie"]}),
            ("semantic_search", {"query": "Which element glows blue?"}),
            ("chunk_read", {"chunk_ids": [RADIUM]}),
        ):
            result = await client.call_tool(name, arguments)
            assert not result.is_error
            jsonschema.validate(result.structured_content, schemas[name].output_schema)


def test_compact_schemas_keep_a_property_named_title():
    schema = {
        "title": "Result",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "score": {"anyOf": [{"type": "number"}, {"type": "integer"}], "title": "Score"},
            "pages": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "description": "pages"},
        },
        "required": ["title"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "score": {"type": "number"},
            "pages": {"type": "string", "description": "pages"},
        },
        "required": ["title"],
    }
    assert "description" not in json.dumps(compact_schema(schema, descriptions=False))


def test_missing_or_foreign_index_is_refused_before_serving(tmp_path: Path):
    result = run_cli("arag_mcp.server", "--index", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "--index" in result.stderr and "does not exist" in result.stderr
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("not an index")
    result = run_cli("arag_mcp.server", "--index", str(tmp_path / "foreign"))
    assert result.returncode == 2 and "not an arag-mcp index" in result.stderr and "Traceback" not in result.stderr


def test_call_from_terminal(hashed_sample_index: Path):
    result = run_cli(
        "arag_mcp.server", "--index", str(hashed_sample_index), "--call", "keyword_search", "keywords=pitchblende"
    )
    assert result.returncode == 0, result.stderr
    assert RADIUM in result.stdout and "pitchblende" in result.stdout
    assert "conversation: c-" not in result.stdout  # no later process could pass this one's handle
    shown = run_cli(
        "arag_mcp.server",
        "--index",
        str(hashed_sample_index),
        "--call",
        "keyword_search",
        "keywords=pitchblende",
        "top_k=1",
    )
    assert "1 chunk matches" in shown.stdout and "More results" not in shown.stdout  # every match is shown
    more = run_cli(
        "arag_mcp.server", "--index", str(hashed_sample_index), "--call", "keyword_search", "keywords=radium", "top_k=1"
    )
    assert "3 chunks match" in more.stdout and "repeat with offset=1" in more.stdout
    huge = run_cli(
        "arag_mcp.server", "--index", str(hashed_sample_index), "--call", "keyword_search", "top_k=" + "9" * 5000
    )
    assert huge.returncode == 2 and huge.stderr.strip().count("\n") == 0, huge.stderr
    assert "has more than 4300 digits; give a shorter one" in huge.stderr
    result = run_cli(
        "arag_mcp.server", "--index", str(hashed_sample_index), "--profile", "naive", "--call", "keyword_search"
    )
    assert result.returncode == 2 and "profile 'naive' has no tool 'keyword_search'" in result.stderr
    result = run_cli("arag_mcp.server", "--list-profiles")
    assert result.returncode == 0 and all(name in result.stdout for name in PROFILES)
    result = run_cli(
        "arag_mcp.server", "--index", str(hashed_sample_index), "--call", "chunk_read", '{"chunk_ids": []}'
    )
    assert result.returncode == 1 and "chunk_ids is empty" in result.stderr


def _loaded_by(code: str) -> list[str]:
    """The HEAVY modules (and the SDK's) a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport json, sys; print(json.dumps(sorted(m for m in {HEAVY + ('mcp',)!r} if m in sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_server_is_ready_for_its_handshake_with_nothing_heavier_than_the_sdk(hashed_sample_index: Path):
    code = (
        "from arag_mcp.server.app import create_server\n"
        "from arag_mcp.server.search.live_index import LiveIndex\n"
        "from arag_mcp.server.tools.profiles import PROFILES\n"
        f"live = LiveIndex({str(hashed_sample_index)!r})\n"
        "servers = [create_server(live, profile) for profile in PROFILES.values()]"
    )
    assert _loaded_by(code) == ["mcp"]


def test_version_imports_neither_the_sdk_nor_the_index():
    code = "from arag_mcp.server.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass"
    assert _loaded_by(code) == []
