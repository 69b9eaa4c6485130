"""Hostile input and damaged indexes get one line naming the problem and the fix: never a
traceback, an internal path, or memory that grows with the input."""

from __future__ import annotations

import json
import shutil
import time
import tracemalloc
from pathlib import Path

import anyio
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.ids import doc_key, parse_chunk_id
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.keywords.segment_store import FOLDER
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client

from .conftest import HASHED_MODEL, live_index, run_cli

pytestmark = pytest.mark.anyio
TABLES = ("chunks", "sentences")
TOOL_CALLS = {
    "keyword_search": {"keywords": ["radium"]},
    "semantic_search": {"query": "Which element glows blue?"},
    "chunk_read": {"chunk_ids": [f"{doc_key('radium')}-0"]},
}


def damage(index: Path, table: str, how: str) -> None:
    files = (
        (index / FOLDER).rglob("texts.arrow")
        if table == "keywords"
        else (index / f"{table}.lance" / "data").glob("*.lance")
    )
    for data_file in files:
        if how == "deleted":
            data_file.unlink()
        else:
            with open(data_file, "r+b") as handle:
                handle.truncate(100)


def assert_one_line_about(message: str, table: str) -> None:
    assert "\n" not in message.strip() and "Traceback" not in message, message
    named, fix = (
        ("keyword segment", "arag-index sync --index") if table == "keywords" else (f"table {table!r}", "--rebuild")
    )
    assert named in message and fix in message, message
    assert ".rs" not in message and "/data/" not in message, message


@pytest.fixture
def index_copy(hashed_sample_index: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "idx"
    shutil.copytree(hashed_sample_index, copy)
    return copy


@pytest.mark.parametrize("how", ["deleted", "truncated"])
@pytest.mark.parametrize("table", [*TABLES, "keywords"])
def test_info_names_a_damaged_table_in_one_line(index_copy: Path, table: str, how: str):
    damage(index_copy, table, how)
    result = run_cli("arag_mcp.indexer", "info", "--index", str(index_copy))
    assert result.returncode == 2 and not result.stdout
    assert_one_line_about(result.stderr, table)
    with pytest.raises(IndexStoreError) as raised:
        open_index(str(index_copy)).check()
    assert_one_line_about(str(raised.value), table)
    if table == "keywords":  # what the line says mends it: the segments are written again from the tables
        assert run_cli("arag_mcp.indexer", "sync", "--index", str(index_copy), "--quiet").returncode == 0
        assert run_cli("arag_mcp.indexer", "info", "--index", str(index_copy)).returncode == 0


@pytest.mark.parametrize("how", ["deleted", "truncated"])
async def test_tools_answer_from_what_they_hold_when_tables_are_damaged_while_serving(index_copy: Path, how: str):
    """The keyword segments hold what keyword search and chunk_read read, and semantic search's
    vectors are in memory: damage to the tables under a running server changes no answer."""
    with live_index(index_copy) as live:
        async with Client(create_server(live)) as client:
            served = {}
            for tool, arguments in TOOL_CALLS.items():  # served intact first (the model loads meanwhile)
                result = await client.call_tool(tool, arguments)
                assert not result.is_error
                served[tool] = result.content[0].text
            for table in TABLES:
                damage(index_copy, table, how)
            for tool, arguments in TOOL_CALLS.items():
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, result.content[0].text)


def write_over(path: Path) -> None:
    """Other bytes of the same size in the middle of the file, as a stale or corrupted copy holds."""
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["terms.arrow", "texts.arrow"])
async def test_a_large_segment_file_written_over_is_refused_once_checked_and_the_tools_answer_without_it(
    index_copy: Path, name: str, caplog: pytest.LogCaptureFixture
):
    """A file of the recorded size holding other bytes passes the check at open; the server reads the
    large files through in the background and refuses the one that does not match, in one log line
    naming sync. Postings refused, keyword search is that line; texts refused, every tool answers
    with the texts of the chunks table. `info` names it, and `sync` by hand writes the segments again."""
    [segment] = [folder for folder in (index_copy / FOLDER).iterdir() if folder.is_dir()]
    write_over(segment / name)
    with live_index(index_copy) as live:
        async with Client(create_server(live)) as client:
            with anyio.fail_after(120):  # until the server has checked the files, on its reads thread
                while f"{name} does not hold what was written" not in caplog.text:
                    await anyio.sleep(0.2)
            keywords = await client.call_tool("keyword_search", TOOL_CALLS["keyword_search"])
            if name == "terms.arrow":
                assert keywords.is_error
                assert_one_line_about(keywords.content[0].text, "keywords")
            else:
                assert not keywords.is_error and "radium" in keywords.content[0].text.lower()
            semantic = await client.call_tool("semantic_search", TOOL_CALLS["semantic_search"])
            assert not semantic.is_error and "radium" in semantic.content[0].text.lower(), semantic.content[0].text
            read = await client.call_tool("chunk_read", TOOL_CALLS["chunk_read"])
            assert not read.is_error and "radium" in read.content[0].text.lower(), read.content[0].text
    for refusal in {record.getMessage() for record in caplog.records if "does not hold" in record.getMessage()}:
        assert_one_line_about(refusal, "keywords")
    info = run_cli("arag_mcp.indexer", "info", "--index", str(index_copy))
    assert info.returncode == 2 and "does not hold what was written" in info.stderr
    assert_one_line_about(info.stderr, "keywords")
    synced = run_cli("arag_mcp.indexer", "sync", "--index", str(index_copy))
    assert synced.returncode == 0 and "writing the keyword segments again" in synced.stderr, synced.stderr
    assert run_cli("arag_mcp.indexer", "info", "--index", str(index_copy)).returncode == 0


async def test_long_punctuated_keyword_is_refused_at_once(hashed_sample_index: Path):
    with live_index(hashed_sample_index, load_model=False) as live:
        async with Client(create_server(live)) as client:
            started = time.perf_counter()
            long = await client.call_tool("keyword_search", {"keywords": ["a." * 200_000]})
            assert long.is_error and "characters" in long.content[0].text and "200" in long.content[0].text
            pieces = await client.call_tool("keyword_search", {"keywords": [".".join("abcdefghijklmnopq")]})
            assert pieces.is_error and "at most 16" in pieces.content[0].text
            assert time.perf_counter() - started < 5
            near_bound = await client.call_tool("keyword_search", {"keywords": ["marie-curie.radium.polonium.paris"]})
            assert not near_bound.is_error


@pytest.fixture(scope="module")
def many_chunks(tmp_path_factory) -> Path:
    """An index of 400 one-sentence documents (one chunk each)."""
    folder = tmp_path_factory.mktemp("many")
    records = [{"id": f"d{i}", "title": f"T{i}", "text": f"Word w{i} and w{i + 1} are here."} for i in range(400)]
    (folder / "docs.jsonl").write_text("\n".join(json.dumps(record) for record in records))
    Index(str(folder / "idx")).add([folder / "docs.jsonl"], BuildOptions(model=HASHED_MODEL, progress=False))
    return folder / "idx"


def test_phrase_bound_memory_does_not_grow_with_pieces(many_chunks: Path):
    """A 3,000-piece phrase over 400 chunks: pieces x chunks counts would be 9.6 MB twice over."""
    snapshot = open_index(str(many_chunks))
    phrase = ".".join(f"w{i}" for i in range(3000))
    keyword_search(snapshot, ["w1.w2"], top_k=5)  # warm caches outside the measurement
    tracemalloc.start()
    hits = keyword_search(snapshot, [phrase], top_k=5).hits
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert hits == []
    assert peak < 3_000_000, peak


@pytest.mark.parametrize("part", ["9" * 5000, "1" * 10, "²", "٣", "-1", ""])
def test_malformed_chunk_id_parts_are_not_ids(part: str):
    assert parse_chunk_id(f"rcvixxccae-{part}") is None


async def test_chunk_read_of_a_huge_part_is_not_found(hashed_sample_index: Path):
    with live_index(hashed_sample_index, load_model=False) as live:
        async with Client(create_server(live)) as client:
            result = await client.call_tool(
                "chunk_read", {"chunk_ids": [f"{doc_key('radium')}-{'9' * 5000}", f"{doc_key('radium')}-0"]}
            )
            assert not result.is_error, result.content[0].text
            statuses = [chunk["status"] for chunk in result.structured_content["chunks"]]
            assert statuses == ["not_found", "ok"]


HUGE = "x" * 2_000_000


async def test_errors_quote_at_most_100_characters_of_their_input(hashed_sample_index: Path):
    with live_index(hashed_sample_index, load_model=False) as live:
        radium = f"{doc_key('radium')}-0"
        calls = [
            ("keyword_search", {"keywords": [HUGE]}),
            ("keyword_search", {"keywords": ["radium"], "scope": {"source": HUGE}}),
            ("keyword_search", {"keywords": ["radium"], "scope": {HUGE: "x"}}),
            ("keyword_search", {"keywords": ["radium"], "scope": {"category": HUGE}}),
            ("keyword_search", {"keywords": ["radium"], "top_k": HUGE}),
            ("find", {"ref": radium, "patterns": [HUGE]}),
            ("open", {"ref": HUGE}),
        ]
        async with Client(create_server(live, PROFILES["arag-plus"])) as client:
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                message = result.content[0].text
                assert result.is_error and "\n" not in message, (tool, message[:200])
                assert "x" * 90 in message and "x" * 101 not in message and len(message) < 400, (tool, message[:200])


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("keyword_search", {"keywords": ["radium"], "scope": {"year": 10**5000 - 1}}, "number of about 5000 digits"),
        ("keyword_search", {"keywords": ["radium"], "scope": {"file_type": 10**5000 - 1}}, "5000 digits"),
        (
            "keyword_search",
            {"keywords": ["radium"], "scope": '{"year": ' + "9" * 5000 + "}"},
            "scope must be an object",
        ),
        ("keyword_search", {"keywords": ["radium"], "scope": '{"a": ' + DEEP + "}"}, "scope must be an object"),
        ("keyword_search", {"keywords": ["radium"], "scope": {"year": [[[[1]]]] * 3}}, "must be a string, number"),
        ("keyword_search", {"keywords": ["radium"], "top_k": 10**5000 - 1}, "top_k must be a whole number"),
        ("open", {"ref": "x", "start_line": True}, "start_line must be a line number from 0; got true"),
        ("open", {"ref": "x", "start_line": False}, "start_line must be a line number from 0; got false"),
        (
            "keyword_search",
            {"keywords": ["radium"], "top_k": True},
            "top_k must be a whole number from 1 to 20; got true",
        ),
    ],
)
async def test_the_model_gets_our_one_line_never_an_exceptions_text(
    hashed_sample_index: Path, tool: str, arguments: dict, named: str
):
    """A 5,000-digit number or JSON nested 100,000 deep in a scope, or true as a line number,
    is named in one line: not "Exceeds the limit (4300 digits)", not "maximum recursion depth"."""
    with live_index(hashed_sample_index, load_model=False) as live:
        async with Client(create_server(live, PROFILES["arag-plus"])) as client:
            result = await client.call_tool(tool, arguments)
    message = result.content[0].text
    assert result.is_error and "\n" not in message and len(message) < 600, message[:300]
    assert named in message, message[:300]
    for leaked in ("4300", "set_int_max_str_digits", "recursion", "Traceback"):
        assert leaked not in message, message[:300]
