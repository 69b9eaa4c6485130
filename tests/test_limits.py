"""Every bound a tool's error names is the bound that tool applies: each tool of each profile is
walked through its limits (through the MCP SDK's in-memory client) — its largest allowed value is
accepted, one more is refused with a message naming exactly that bound."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.server.app import create_server
from arag_mcp.server.search.limits import (
    MAX_CHUNK_IDS,
    MAX_FIND_PATTERN_CHARS,
    MAX_FIND_PATTERNS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORD_PIECES,
    MAX_KEYWORD_WORDS,
    MAX_KEYWORDS,
    MAX_OFFSET,
    MAX_QUERIES,
    MAX_QUERY_CHARS,
    MAX_RESULTS_PER_QUERY,
    MAX_SCOPE_CHARS,
    MAX_SCOPE_CONDITIONS,
    MAX_TOP_K,
)
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client

from .conftest import live_index

pytestmark = pytest.mark.anyio
RADIUM = f"{doc_key('radium')}-0"
TOP_K = {"search": MAX_RESULTS_PER_QUERY}
"""A tool's top_k bound where it is not MAX_TOP_K."""
UNBOUNDED = {"conversation", "ref", "semantic", "again", "forms"}
"""Arguments with no bound an error names (a ref's length is refused as an unknown ref)."""


@dataclass(frozen=True)
class Limit:
    """One bound of one argument: the arguments at the bound, one past it, and what the refusal says."""

    name: str
    allowed: dict[str, Any]
    refused: dict[str, Any]
    message: str
    size_only: bool = False
    """At the bound the call may still fail for another reason (a scope naming no document), never for its size."""


def limits(tool: str, argument: str, schema: dict, lines: int) -> list[Limit]:
    """The limits a tool applies to one of its arguments, from the bounds the server declares."""
    if argument == "top_k":
        top = TOP_K.get(tool, MAX_TOP_K)
        assert (schema["minimum"], schema["maximum"]) == (1, top), tool
        return [Limit("top_k", {"top_k": top}, {"top_k": top + 1}, f"from 1 to {top}; got {top + 1}")]
    if argument == "offset":
        assert (schema["minimum"], schema["maximum"]) == (0, MAX_OFFSET), tool
        return [
            Limit(
                "offset",
                {argument: MAX_OFFSET},
                {argument: MAX_OFFSET + 1},
                f"from 0 to {MAX_OFFSET}; got {MAX_OFFSET + 1}",
            )
        ]
    if argument == "keywords":
        words = [f"name{i}" for i in range(MAX_KEYWORDS + 1)]
        phrase = ["word"] * (MAX_KEYWORD_WORDS + 1)
        pieces = ["p"] * (MAX_KEYWORD_PIECES + 1)
        return [
            Limit("keywords", {argument: words[:-1]}, {argument: words}, f"pass at most {MAX_KEYWORDS},"),
            Limit(
                "keyword characters",
                {argument: ["x" * MAX_KEYWORD_CHARS]},
                {argument: ["x" * (MAX_KEYWORD_CHARS + 1)]},
                f"keep each to at most {MAX_KEYWORD_CHARS},",
            ),
            Limit(
                "keyword words",
                {argument: [" ".join(phrase[:-1])]},
                {argument: [" ".join(phrase)]},
                f"keep each to at most {MAX_KEYWORD_WORDS} words",
            ),
            Limit(
                "keyword pieces",
                {argument: ["-".join(pieces[:-1])]},
                {argument: ["-".join(pieces)]},
                f"pass at most {MAX_KEYWORD_PIECES} per keyword",
            ),
        ]
    if argument == "query":
        return [query_chars({argument: "q" * MAX_QUERY_CHARS}, {argument: "q" * (MAX_QUERY_CHARS + 1)})]
    if argument == "queries":
        queries = [f"question {i}" for i in range(MAX_QUERIES + 1)]
        return [
            Limit("queries", {argument: queries[:-1]}, {argument: queries}, f"pass at most {MAX_QUERIES} "),
            query_chars({argument: ["q" * MAX_QUERY_CHARS]}, {argument: ["q" * (MAX_QUERY_CHARS + 1)]}),
        ]
    if argument == "chunk_ids":
        ids = [f"{doc_key(str(i))}-0" for i in range(MAX_CHUNK_IDS + 1)]
        return [Limit("chunk_ids", {argument: ids[:-1]}, {argument: ids}, f"read at most {MAX_CHUNK_IDS} per call")]
    if argument == "patterns":
        patterns = [f"pattern {i}" for i in range(MAX_FIND_PATTERNS + 1)]
        return [
            Limit("patterns", {argument: patterns[:-1]}, {argument: patterns}, f"pass at most {MAX_FIND_PATTERNS}"),
            Limit(
                "pattern characters",
                {argument: ["p" * MAX_FIND_PATTERN_CHARS]},
                {argument: ["p" * (MAX_FIND_PATTERN_CHARS + 1)]},
                f"keep each to at most {MAX_FIND_PATTERN_CHARS}",
            ),
        ]
    if argument == "start_line":
        return [Limit("start_line", {argument: lines - 1}, {argument: lines}, f"has {lines} lines (0-{lines - 1})")]
    if argument == "scope":
        conditions = {f"field{i}": "x" for i in range(MAX_SCOPE_CONDITIONS + 1)}
        return [
            Limit(
                "scope conditions",
                {argument: dict(list(conditions.items())[:-1])},
                {argument: conditions},
                f"give at most {MAX_SCOPE_CONDITIONS},",
                size_only=True,
            ),
            Limit(
                "scope characters",
                {argument: {"source": "s" * MAX_SCOPE_CHARS}},
                {argument: {"source": "s" * (MAX_SCOPE_CHARS + 1)}},
                f"give at most {MAX_SCOPE_CHARS}:",
                size_only=True,
            ),
        ]
    assert argument in UNBOUNDED, f"{tool}: no limits walked for its argument {argument!r}"
    return []


def query_chars(allowed: dict, refused: dict) -> Limit:
    return Limit("query characters", allowed, refused, f"keep it to at most {MAX_QUERY_CHARS} ")


BASE = {"keywords": ["radium"], "query": "radium", "queries": ["radium"], "chunk_ids": [RADIUM], "ref": RADIUM}
BASE_BY_TOOL = {"find": {"patterns": ["radium"]}}


@pytest.fixture(scope="module")
def live(hashed_sample_index: Path) -> Iterator[LiveIndex]:
    with live_index(hashed_sample_index) as live:
        yield live


@pytest.mark.parametrize("profile", sorted(PROFILES))
async def test_each_tool_accepts_its_largest_values_and_names_its_bound_beyond(live: LiveIndex, profile: str):
    lines = len(live.snapshot().documents.get(RADIUM).lines)
    async with Client(create_server(live, PROFILES[profile])) as client:
        for tool in (await client.list_tools()).tools:
            properties = tool.input_schema["properties"]
            required = set(tool.input_schema.get("required", []))
            base = {k: v for k, v in {**BASE, **BASE_BY_TOOL.get(tool.name, {})}.items() if k in required}
            walked = [limit for name, schema in properties.items() for limit in limits(tool.name, name, schema, lines)]
            assert walked, tool.name
            for limit in walked:
                allowed = await client.call_tool(tool.name, {**base, **limit.allowed})
                said = allowed.content[0].text
                if limit.size_only:
                    assert limit.message not in said, (profile, tool.name, limit.name, said)
                else:
                    assert not allowed.is_error, (profile, tool.name, limit.name, said)
                refused = await client.call_tool(tool.name, {**base, **limit.refused})
                said = refused.content[0].text
                assert refused.is_error and limit.message in said, (profile, tool.name, limit.name, said)
                assert "\n" not in said, said


async def test_agentic_search_names_its_own_top_k_bound(live: LiveIndex):
    async with Client(create_server(live, PROFILES["agentic"])) as client:
        refused = await client.call_tool("search", {"queries": ["radium"], "top_k": 20})
        assert refused.is_error
        assert refused.content[0].text == f"top_k must be a whole number from 1 to {MAX_RESULTS_PER_QUERY}; got 20"
