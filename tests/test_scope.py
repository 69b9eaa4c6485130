"""Scoped searches and what results say of their documents, on a real index of several folders,
file types and metadata values: every search tool, scoped, equals its brute-force definition
restricted to the scope."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import index_dump
import numpy as np
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.keywords.definition import WordCorpus, folded_words, keyword_ranking
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from brute_force import SentenceMatrix, vector_ranking
from mcp import Client

from .conftest import HASHED_MODEL, live_index

pytestmark = pytest.mark.anyio

PUMP = "The harbour pump moves water out of the dry dock. "
FILES = {
    "guide/install.md": "# Installing the pump\n\n" + PUMP * 6 + "\n\nBolt the pump to the quay before the tide.",
    "guide/usage.md": "# Using the pump\n\n" + PUMP * 4 + "\n\nA valve on the pump stops the flow back.",
    "api/pump.html": "<html><head><title>Pump API</title></head><body><h1>Pump API</h1>"
    "<p>The pump endpoint starts the harbour pump and reports the water level.</p>"
    "<p>The valve endpoint closes the valve.</p></body></html>",
    "notes/log.txt": "Monday: the pump was serviced. Tuesday: the crane was painted. Wednesday: rain all day.",
}
RECORDS = [
    {
        "id": "r1",
        "title": "Valve 12",
        "text": "A brass valve near the pump house; it leaks in winter.",
        "category": "valve",
        "year": 2021,
    },
    {
        "id": "r2",
        "title": "Valve 14",
        "text": "A steel valve that closes the dock when the pump stops.",
        "category": "valve",
        "year": 2023,
    },
    {
        "id": "r3",
        "title": "Pump 3",
        "text": "A small pump for rain water from the quay drains.",
        "category": "pump",
        "year": 2023,
        "tags": ["spare", "small"],
    },
    {
        "id": "r4",
        "title": "Crane 1",
        "text": "The crane lifts boats out of the water for repair.",
        "category": "crane",
        "year": 2019,
    },
]
SCOPES = [
    {"source": "kb/records"},
    {"source": "*.md"},
    {"source": "kb/**/*.html"},
    {"source": "kb/*/[!u]??????.*"},
    {"file_type": "txt"},
    {"category": "valve"},
    {"source": "kb/records", "year": 2023},
    {"file_type": "jsonl", "year": "2023"},
    {"title": "VALVE 12"},
    {"title": "Pump API", "file_type": "html"},
    {"document": "r3"},
    {"document": "kb/guide/usage.md"},
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("scope")
    for name, text in FILES.items():
        path = root / "kb" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "kb" / "records").mkdir()
    (root / "kb" / "records" / "parts.jsonl").write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    index = root / "idx"
    Index(str(index)).add([root / "kb"], BuildOptions(model=HASHED_MODEL, progress=False, chunk_tokens=40))
    return index


@pytest.fixture(scope="module")
def live(corpus: Path) -> Iterator[LiveIndex]:
    with live_index(corpus) as live:
        yield live


@pytest.fixture(scope="module")
def chunks(corpus: Path) -> list:
    return index_dump.all_chunks(open_index(str(corpus)))


def scoped(chunks: list, scope: dict) -> set[str]:
    """The chunk ids a scope admits, by the scope's definition, from the chunks themselves."""
    import pathspec

    admitted = set()
    for chunk in chunks:
        ok = True
        for key, value in scope.items():
            if key == "source":
                ok &= pathspec.GitIgnoreSpec.from_lines([value]).match_file(chunk.source)
            elif key == "file_type":
                ok &= chunk.file_type == value
            elif key == "title":
                ok &= folded_words(chunk.title) == folded_words(value)
            elif key == "document":
                ok &= value in (chunk.doc_id, chunk.source, chunk.chunk_id.rpartition("-")[0])
            else:
                ok &= key in chunk.metadata and str(chunk.metadata[key]) == str(value)
        if ok:
            admitted.add(chunk.chunk_id)
    return admitted


def ranked(result) -> list[tuple[str, float]]:
    assert not result.is_error, result.content[0].text
    return [(r.get("chunk_id") or r["ref"], r["score"]) for r in result.structured_content["results"]]


def test_results_carry_file_type_and_bounded_metadata(chunks):
    types = {chunk.source: chunk.file_type for chunk in chunks}
    assert types == {
        "kb/guide/install.md": "md",
        "kb/guide/usage.md": "md",
        "kb/api/pump.html": "html",
        "kb/notes/log.txt": "txt",
        "kb/records/parts.jsonl": "jsonl",
    }


async def test_keyword_search_shows_file_type_and_metadata(live: LiveIndex):
    async with Client(create_server(live)) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["drains"], "top_k": 1})
        [hit] = found.structured_content["results"]
        assert hit["file_type"] == "jsonl"
        assert hit["metadata"] == {"category": "pump", "tags": '["spare", "small"]', "year": 2023}
        assert "| type: jsonl |" in found.content[0].text
        assert (
            'metadata: {"category": "pump", "tags": "[\\"spare\\", \\"small\\"]", "year": 2023}'
            in found.content[0].text
        )
        valves = await client.call_tool("keyword_search", {"keywords": ["valve"], "scope": {"category": "valve"}})
        assert len(valves.structured_content["results"]) == 2
        assert "type (every result): jsonl" in valves.content[0].text  # said once, not on each result
        assert valves.content[0].text.count("kb/records/parts.jsonl") == 1
        assert "| type:" not in valves.content[0].text
        plain = await client.call_tool("keyword_search", {"keywords": ["crane"], "top_k": 5})
        log = next(r for r in plain.structured_content["results"] if r.get("source", "") == "kb/notes/log.txt")
        assert log["file_type"] == "txt" and "metadata" not in log


async def test_a_one_file_collection_does_not_repeat_its_source_and_type_in_every_answer(tmp_path: Path):
    """The instructions name the collection; a source and type every chunk shares are left out of the
    text (the structured content keeps them)."""
    records = [{"id": f"r{n}", "title": f"Valve {n}", "text": f"Valve {n} drains the tank."} for n in range(3)]
    (tmp_path / "parts.jsonl").write_text("\n".join(json.dumps(record) for record in records))
    Index(str(tmp_path / "idx")).add([tmp_path / "parts.jsonl"], BuildOptions(model=HASHED_MODEL, progress=False))
    with live_index(tmp_path / "idx", load_model=False) as one_file:
        async with Client(create_server(one_file)) as client:
            found = await client.call_tool("keyword_search", {"keywords": ["valve"]})
    assert len(found.structured_content["results"]) == 3 and found.structured_content["source"] == "parts.jsonl"
    text = found.content[0].text
    assert "every result" not in text and "| type:" not in text and "| source:" not in text, text


@pytest.mark.parametrize("scope", SCOPES, ids=json.dumps)
async def test_scoped_keyword_search_is_brute_force_within_the_scope(live: LiveIndex, chunks, scope: dict):
    admitted = scoped(chunks, scope)
    inside = [chunk for chunk in chunks if chunk.chunk_id in admitted]
    words = WordCorpus(
        [c.chunk_id for c in inside], [c.title for c in inside], [c.text for c in inside], [c.tokens for c in inside]
    )
    texts = [c.text for c in inside]
    for match in ("word", "substring"):
        async with Client(create_server(live, keyword_match=match)) as client:
            for keywords in (["pump"], ["valve", "water"], ["rain water"]):
                result = await client.call_tool("keyword_search", {"keywords": keywords, "top_k": 3, "scope": scope})
                if match == "word":
                    expected = [(cid, round(score, 2)) for cid, score in words.ranking(keywords, 3)]
                else:
                    expected = keyword_ranking([c.chunk_id for c in inside], texts, keywords, 3)
                assert ranked(result) == expected, (match, keywords)
                assert result.structured_content["message"].startswith(
                    "Searched within the scope"
                )  # before the results


async def test_a_scoped_top_k_comes_from_outside_the_global_top_k(live: LiveIndex, chunks, hashed_embedder):
    scope = {"source": "kb/records"}
    async with Client(create_server(live)) as client:
        everywhere = ranked(await client.call_tool("keyword_search", {"keywords": ["pump"], "top_k": 2}))
        within = ranked(await client.call_tool("keyword_search", {"keywords": ["pump"], "top_k": 2, "scope": scope}))
        assert within and not {cid for cid, _ in within} & {cid for cid, _ in everywhere}
        assert {cid for cid, _ in within} <= scoped(chunks, scope)
        question = {"query": "Which pump empties the dry dock?", "top_k": 2}
        everywhere = ranked(await client.call_tool("semantic_search", question))
        within = ranked(await client.call_tool("semantic_search", {**question, "scope": scope}))
        assert len(within) == 2 and not {cid for cid, _ in within} & {cid for cid, _ in everywhere}


@pytest.mark.parametrize("scope", SCOPES, ids=json.dumps)
async def test_scoped_semantic_searches_are_brute_force_within_the_scope(
    live: LiveIndex, chunks, hashed_embedder, scope
):
    snapshot = open_index(live.uri)
    admitted = scoped(chunks, scope)
    sentence_ids, sentence_vectors = index_dump.sentence_vectors(snapshot)
    keep = np.array([cid in admitted for cid in sentence_ids])
    sentences = SentenceMatrix([cid for cid, k in zip(sentence_ids, keep) if k], sentence_vectors[keep])
    chunk_ids, chunk_vectors = index_dump.chunk_vectors(snapshot)
    inside = np.array([cid in admitted for cid in chunk_ids])
    questions = ["Which pump empties the dry dock?", "what leaks in winter", "lifting boats"]
    vectors = hashed_embedder.encode_queries(questions)
    async with Client(create_server(live)) as client:
        for question, vector in zip(questions, vectors):
            result = await client.call_tool("semantic_search", {"query": question, "top_k": 3, "scope": scope})
            assert_same(ranked(result), sentences.best_sentence_ranking(vector, 3))
    async with Client(create_server(live, PROFILES["naive"])) as client:
        for question, vector in zip(questions, vectors):
            result = await client.call_tool("naive_embedding_search", {"query": question, "top_k": 3, "scope": scope})
            kept = [cid for cid, k in zip(chunk_ids, inside) if k]
            assert_same(ranked(result), vector_ranking(kept, chunk_vectors[inside], vector, 3))
    merged = merged_ranking(sentences, vectors, 2)
    for profile, tool in (("arag-plus", "semantic_search"), ("agentic", "search")):
        async with Client(create_server(live, PROFILES[profile])) as client:
            result = await client.call_tool(tool, {"queries": questions, "top_k": 2, "scope": scope})
            assert_same(ranked(result), merged)


def merged_ranking(sentences: SentenceMatrix, vectors: np.ndarray, top_k: int) -> list[tuple[str, float]]:
    """Several queries' rankings merged: each chunk once, with its best score."""
    best: dict[str, float] = {}
    for vector in vectors:
        for cid, score in sentences.best_sentence_ranking(vector, top_k):
            best[cid] = max(score, best.get(cid, score))
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))


def assert_same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [cid for cid, _ in found] == [cid for cid, _ in expected]
    assert [score for _, score in found] == pytest.approx([score for _, score in expected], abs=1e-4)


BAD_SCOPES = [
    (
        {"colour": "red"},
        "\"colour\" is not a key of this index; its keys are 'source', 'file_type', 'title', 'document' and the metadata fields \"category\", \"year\", \"tags\"",
    ),
    ({"title": "Valve 99"}, 'no document is titled "Valve 99"; titles here include "Valve 12", "Valve 14"'),
    ({"document": "nope"}, 'scope "document" "nope" is no document here; give a ref from the results'),
    ({"source": "kb/[guide"}, "has an unclosed '[' (in one folder or file name); close it"),
    ({"source": "!kb/guide"}, "starts with '!', which negates"),
    ({"source": "kb/[z-a]*"}, "has the range 'z-a', which runs backwards; write it low to high, as 'a-z'"),
    ({"source": "kb/guide\\"}, "has a '\\' with nothing after it to escape (at its end or before a '/'); drop it"),
    ({"source": "kb\\/guide"}, "has a '\\' with nothing after it to escape"),
    ({"source": "kb/[[:alpha:]]*"}, "a character class such as '[:alpha:]', which patterns here do not support"),
    ({"source": "?*" * 20 + "z"}, "has 40 wildcards; use at most 12"),
    ({"source": "kb/" + "x" * 600}, 'scope "source" has 603 characters ("kb/xxx'),
    ({"k" * 600: "v"}, 'a scope key has 600 characters ("kkk'),
    ({f"field{i}": i for i in range(21)}, "the scope has 21 conditions; give at most 20"),
    ({"source": "nowhere/"}, 'scope "source" "nowhere/" matches no document; sources look like "kb/api/pump.html"'),
    ({"file_type": "docx"}, 'scope "file_type" "docx" matches no document; this index holds "md"'),
    ({"category": "boat"}, 'no document has "category" = "boat"; its values include "valve", "pump", "crane"'),
    ({"file_type": "md", "category": "valve"}, "no document meets every condition of the scope"),
    ({"category": ["valve"]}, 'scope "category" must be a string, number or true/false'),
    ({"source": 3}, 'scope "source" must be a path or pattern'),
]


@pytest.mark.parametrize(("scope", "expected"), BAD_SCOPES, ids=[json.dumps(s)[:60] for s, _ in BAD_SCOPES])
async def test_a_scope_that_cannot_match_is_one_line_naming_the_fix(live: LiveIndex, scope: dict, expected: str):
    async with Client(create_server(live)) as client:
        for tool, arguments in (("keyword_search", {"keywords": ["pump"]}), ("semantic_search", {"query": "pump"})):
            result = await client.call_tool(tool, {**arguments, "scope": scope})
            text = result.content[0].text
            assert result.is_error and expected in text, text
            assert "\n" not in text and "Traceback" not in text and len(text) < 400, text


async def test_a_scope_as_text_is_a_source_pattern_or_json(live: LiveIndex, chunks):
    async with Client(create_server(live)) as client:
        for scope in ("kb/guide", '{"source": "kb/guide"}'):
            result = await client.call_tool("keyword_search", {"keywords": ["pump"], "top_k": 5, "scope": scope})
            assert {cid for cid, _ in ranked(result)} == scoped(chunks, {"source": "kb/guide"})


@pytest.mark.parametrize("path", ["in memory", "scope's own vectors", "filtered table search"])
def test_every_semantic_search_path_is_exact_within_the_scope(
    live: LiveIndex, chunks, hashed_embedder, monkeypatch, path
):
    """Above the IVF-PQ index's size (no vectors in memory) a small scope is searched from its own
    vectors and a large one through the table's search, filtered first; both equal brute force."""
    import dataclasses

    from arag_mcp.indexer.index import sentence_search
    from arag_mcp.server.search import retrieval
    from arag_mcp.server.search.scope import in_scope

    snapshot = open_index(live.uri)
    if path != "in memory":
        snapshot = snapshot.replaced(sentences=dataclasses.replace(snapshot.sentences, in_memory=None))
    if path == "filtered table search":
        monkeypatch.setattr(sentence_search, "EXACT_SCOPE_SENTENCES", 0)
    sentence_ids, sentence_vectors = index_dump.sentence_vectors(snapshot)
    for scope in SCOPES:
        admitted = scoped(chunks, scope)
        keep = np.array([cid in admitted for cid in sentence_ids])
        sentences = SentenceMatrix([cid for cid, k in zip(sentence_ids, keep) if k], sentence_vectors[keep])
        for vector in hashed_embedder.encode_queries(["Which pump empties the dry dock?", "what leaks in winter"]):
            hits = retrieval.semantic_search(snapshot, vector, 3, in_scope(snapshot, scope))
            assert_same([(hit.chunk.chunk_id, hit.score) for hit in hits], sentences.best_sentence_ranking(vector, 3))


def test_widening_a_scoped_search_stops_at_the_scope_s_sentences(live: LiveIndex, hashed_embedder, monkeypatch):
    """A scope of fewer chunks than top_k widens its pool of nearest sentences only until the pool
    holds every sentence of the scope, not towards the whole index's count."""
    from arag_mcp.indexer.index.sentence_search import SentenceSearch
    from arag_mcp.server.search import retrieval
    from arag_mcp.server.search.scope import in_scope

    snapshot = open_index(live.uri)
    scope = in_scope(snapshot, {"file_type": "txt"})
    monkeypatch.setattr(retrieval, "candidate_pool", lambda top_k: 1)
    assert 1 < snapshot.sentences.count(scope) <= 4 < 16 < snapshot.sentences.count()
    pools = []
    nearest = SentenceSearch.nearest
    monkeypatch.setattr(
        SentenceSearch,
        "nearest",
        lambda self, v, pool, *rest: pools.append(pool) or nearest(self, v, pool, *rest),
    )
    [vector] = hashed_embedder.encode_queries(["When was the crane painted?"])
    hits = retrieval.semantic_search(snapshot, vector, 5, scope)
    assert [hit.chunk.source for hit in hits] == ["kb/notes/log.txt"]
    assert pools == [1, 4]
