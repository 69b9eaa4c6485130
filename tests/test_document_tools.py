"""AgenticRAG's document tools (search, find, open) and arag-plus, on real multi-chunk documents."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import index_dump
import numpy as np
import pytest
from arag_mcp.agent.mcp_tools import named_chunks
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.document_lines import LINE_CHARS
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search import retrieval, snippets, within_document
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from brute_force import SentenceMatrix
from mcp import Client

from .conftest import BENCH_DATA, HASHED_MODEL, REPO, live_index

pytestmark = pytest.mark.anyio
NOVEL_CHARS = 60_000


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """This project's README (a long Markdown file) and, where the shared data is present, the start
    of a GraphRAG-Bench novel (one 300,000-character line in the original)."""
    folder = tmp_path_factory.mktemp("documents")
    (folder / "guide.md").write_text((REPO / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    novels = BENCH_DATA / "graphrag-novel" / "corpus.jsonl"
    if novels.exists():
        with novels.open(encoding="utf-8") as handle:
            record = json.loads(handle.readline())
        record["text"] = record["text"][:NOVEL_CHARS]
        (folder / "novel.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def index(corpus: Path, tmp_path_factory) -> Path:
    index = tmp_path_factory.mktemp("documents-index") / "idx"
    Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False, chunk_tokens=300))
    return index


@pytest.fixture(scope="module")
def live(index: Path) -> Iterator[LiveIndex]:
    with live_index(index) as live:
        yield live


def documents_of(index: Path) -> list:
    snapshot = open_index(str(index))
    keys = sorted({chunk.chunk_id.rsplit("-", 1)[0] for chunk in index_dump.all_chunks(snapshot)})
    return [snapshot.documents.get(key) for key in keys]


def test_documents_are_their_chunks_as_stable_numbered_lines(index: Path, corpus: Path):
    snapshot = open_index(str(index))
    for document in documents_of(index):
        assert len(document.chunk_ids) > 3, document.title
        assert all(len(line) <= LINE_CHARS for line in document.lines)
        chunks = snapshot.chunks.by_id(document.chunk_ids)
        for number, cid in enumerate(document.chunk_ids):
            lines = document.chunk_lines(number)
            text = chunks[cid].text
            for i in lines:  # each line is its text at its offset; between lines, nothing or one newline
                offset = document.line_offsets[i]
                assert text[offset : offset + len(document.lines[i])] == document.lines[i]
                end = document.line_offsets[i + 1] if i + 1 < lines.stop else len(text)
                assert text[offset + len(document.lines[i]) : end] in ("", "\n")
            for at, start in enumerate(chunks[cid].sentence_spans):
                line = document.line_at(number, start[0])
                assert line in lines and document.line_offsets[line] <= start[0], (cid, at)
        again = open_index(str(index)).documents.get(document.chunk_ids[-1])
        assert again.lines == document.lines


def test_find_is_every_matching_line_with_passages_around_the_first(index: Path):
    for document in documents_of(index):
        words = re.findall(r"[A-Za-z]{6,}", " ".join(document.lines))
        patterns = [words[0], words[len(words) // 2].upper(), "no such phrase anywhere", words[-1]]
        found = within_document.find(document, patterns)
        given: set[str] = set()
        for pattern, matches in zip(patterns, found):
            expected = [i for i, line in enumerate(document.lines) if pattern.lower() in line.lower()]
            assert matches.lines == expected
            assert sum(len(p.match_lines) for p in matches.passages) <= min(2, len(expected))
            for passage in matches.passages:
                assert set(passage.match_lines) <= set(expected)
                around = {i for n in passage.match_lines for i in range(n - 2, n + 3) if 0 <= i < len(document.lines)}
                assert set(passage.lines) == around and len(passage.lines) == len(around)  # one run
                text = "\n".join(document.lines[i] for i in passage.lines)
                assert text not in given
                given.add(text)
            ranges = sorted((p.lines for p in matches.passages), key=lambda lines: lines.start)
            assert all(earlier.stop < later.start for earlier, later in zip(ranges, ranges[1:]))
        assert found[2].lines == [] and found[2].passages == []


def test_open_windows_are_bounded_and_tile_the_document(index: Path):
    for document in documents_of(index):
        start, covered = 0, []
        while start < len(document.lines):
            lines = within_document.window(document, start)
            assert lines.start == start and len(lines) <= within_document.WINDOW_LINES
            assert sum(len(document.lines[i]) + 1 for i in lines) <= within_document.MAX_WINDOW_CHARS or len(lines) == 1
            covered.extend(lines)
            start = lines.stop
        assert covered == list(range(len(document.lines)))
        short = within_document.window(document, len(document.lines) - 3)
        assert list(short) == list(range(len(document.lines) - 3, len(document.lines)))


def test_semantic_find_gives_the_lines_of_the_nearest_sentences(index: Path, hashed_embedder):
    snapshot = open_index(str(index))
    document = documents_of(index)[-1]
    chunk_ids, starts, vectors = snapshot.sentences.of_document(document)
    pattern = "how a build that is interrupted is recovered"
    vector = hashed_embedder.encode_queries([pattern])[0]
    [matches] = within_document.find_semantic(document, [pattern], vector[None, :], (chunk_ids, starts, vectors))
    best = int(np.argmax(vectors @ vector))
    index_of = {cid: i for i, cid in enumerate(document.chunk_ids)}
    assert matches.lines[0] == document.line_at(index_of[chunk_ids[best]], starts[best])
    assert len(matches.lines) == len(set(matches.lines)) and matches.lines[0] in matches.passages[0].match_lines


def test_merged_search_equals_each_query_brute_force(index: Path, hashed_embedder):
    snapshot = open_index(str(index))
    matrix = SentenceMatrix(*index_dump.sentence_vectors(snapshot))
    queries = ["Which profile removes keyword search?", "remote object storage credentials", "a long voyage at sea"]
    vectors = hashed_embedder.encode_queries(queries)
    merged = retrieval.merged_semantic_search(snapshot, vectors, 4)
    expected: dict[str, tuple[float, list[int]]] = {}
    for number, vector in enumerate(vectors):
        for cid, score in matrix.best_sentence_ranking(vector, 4):
            best, found_by = expected.get(cid, (-2.0, []))
            expected[cid] = (max(best, score), [*found_by, number])
    order = sorted(expected, key=lambda cid: (-expected[cid][0], cid))
    assert [m.hit.chunk.chunk_id for m in merged] == order
    for found in merged:
        assert found.hit.score == pytest.approx(expected[found.hit.chunk.chunk_id][0], abs=1e-5)
        assert found.queries == expected[found.hit.chunk.chunk_id][1]


def client_for(live: LiveIndex, profile: str) -> Client:
    return Client(create_server(live, PROFILES[profile]))


async def test_agentic_tools_drill_into_a_document_without_resending_lines(
    live: LiveIndex, monkeypatch: pytest.MonkeyPatch
):
    """The search sends snippets here (short chunks are sent whole only up to 3 sentences and 600
    characters in this test): the guide's section would otherwise reach the conversation whole, and
    find would rightly mark its passage as sent before."""
    monkeypatch.setattr(snippets, "WHOLE_CHUNK_SENTENCES", 3)
    monkeypatch.setattr(snippets, "WHOLE_CHUNK_CHARS", 600)
    async with client_for(live, "agentic") as client:
        found = await client.call_tool(
            "search", {"queries": ["How do I attach the server to Claude Desktop?", "host config file"], "top_k": 3}
        )
        assert not found.is_error, found.content[0].text
        results = found.structured_content["results"]
        conversation = found.structured_content["conversation"]
        guide = next(r for r in results if r["file_name"] == "guide.md")
        assert guide["file_type"] == "md" and guide["ref"] in found.content[0].text
        assert all(set(r["queries"]) <= {0, 1} and r["queries"] for r in results)

        hit = await client.call_tool(
            "find",
            {"ref": guide["ref"], "patterns": ["claude_desktop_config", "zzz-nothing"], "conversation": conversation},
        )
        [first, nothing] = hit.structured_content["patterns"]
        assert first["matches"] >= 1 and nothing == {
            "pattern": "zzz-nothing",
            "matches": 0,
            "match_lines": [],
            "passages": [],
        }
        passage = first["passages"][0]
        assert passage["status"] == "ok" and f"{first['match_lines'][0]}: " in passage["text"]
        assert "claude_desktop_config" in passage["text"].lower()

        line = first["match_lines"][0]
        opened = await client.call_tool(
            "open", {"ref": guide["ref"], "start_line": max(0, line - 10), "conversation": conversation}
        )
        window = opened.structured_content
        assert window["first_line"] == max(0, line - 10) and window["message"].startswith(
            f"Viewing lines [{window['first_line']}–"
        )
        assert f"of {window['total_lines']} lines" in window["message"]
        assert "already in this conversation" in window["text"]  # the passage find sent

        again = await client.call_tool(
            "open", {"ref": guide["ref"], "start_line": window["first_line"], "conversation": conversation}
        )
        marker = again.structured_content["text"]  # one run, naming the calls that sent its lines
        assert marker.startswith(f"[lines {window['first_line']}–{window['last_line']}: already in this conversation")
        assert marker.endswith("call 2 (find); call 3 (open)]") and "\n" not in marker
        other = await client.call_tool("open", {"ref": guide["ref"], "start_line": window["first_line"]})
        assert "already in this conversation" not in other.structured_content["text"]

        past = await client.call_tool("open", {"ref": guide["ref"], "start_line": 10**6})
        assert past.is_error and "past the end" in past.content[0].text
        unknown = await client.call_tool("find", {"ref": "aaaaaaaaaa-0", "patterns": ["x"]})
        assert unknown.is_error and "no document has the ref" in unknown.content[0].text


async def test_arag_plus_reads_and_opens_share_one_read_set(live: LiveIndex):
    async with client_for(live, "arag-plus") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == ["keyword_search", "semantic_search", "chunk_read", "find", "open"]
        assert tools["semantic_search"].input_schema["properties"]["queries"]["type"] == "array"
        found = await client.call_tool("semantic_search", {"query": "attach to Claude Desktop", "top_k": 2})
        assert not found.is_error, found.content[0].text
        ref = found.structured_content["results"][0]["chunk_id"]
        conversation = found.structured_content["conversation"]
        document = open_index(live.uri).documents.get(ref)
        lines = document.chunk_lines(document.chunk_ids.index(ref))
        opened = await client.call_tool("open", {"ref": ref, "start_line": lines.start, "conversation": conversation})
        assert opened.structured_content["last_line"] >= lines.stop - 1
        read = await client.call_tool("chunk_read", {"chunk_ids": [ref], "conversation": conversation})
        assert read.structured_content["chunks"][0]["status"] == "read_before"


async def test_the_agent_ties_document_tool_results_to_their_refs(live: LiveIndex):
    """So that its context management keeps or prunes them by the references the model names."""
    async with client_for(live, "agentic") as client:
        found = await client.call_tool("search", {"queries": ["remote object storage"], "top_k": 2})
        results = found.structured_content["results"]
        refs = [r["ref"] for r in results]
        whole = tuple(r["ref"] for r in results if r.get("whole_chunk"))
        assert named_chunks(found.structured_content) == (tuple(refs), whole)
        opened = await client.call_tool("open", {"ref": refs[0]})
        assert named_chunks(opened.structured_content) == ((refs[0],), ())
