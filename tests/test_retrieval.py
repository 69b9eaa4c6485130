"""The retrieval functions against a real LanceDB index, checked with hand-counted scores
and against brute-force definitions."""

from __future__ import annotations

import index_dump
import numpy as np
import pytest
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.server.search import retrieval
from brute_force import SentenceMatrix, vector_ranking


def cid(doc_id: str, part: int = 0) -> str:
    return f"{doc_key(doc_id)}-{part}"


@pytest.fixture(scope="module")
def scoring(scoring_index):
    return open_index(str(scoring_index))


def paper_keyword_search(snapshot, keywords: list[str], top_k: int) -> list[retrieval.Hit]:
    """keyword_search as the paper defines it (--keyword-match substring)."""
    return keyword_search(snapshot, keywords, top_k, "substring").hits


def test_keyword_scores_are_count_times_length(scoring):
    hits = paper_keyword_search(scoring, ["cat", "dog house"], top_k=20)
    scores = {hit.chunk.chunk_id: hit.score for hit in hits}
    # c: "dog house" x2 (9 chars) + "cat" x1; b: "cat" x3 + "conCATenate"; a: "cat" x2; f, g: "cat" x1
    assert scores == {cid("c"): 21, cid("b"): 12, cid("a"): 6, cid("f"): 3, cid("g"): 3}
    assert [hit.chunk.chunk_id for hit in hits][:3] == [cid("c"), cid("b"), cid("a")]
    assert [hit.chunk.chunk_id for hit in hits][3:] == sorted([cid("f"), cid("g")])


def test_keyword_snippet_is_the_matching_sentences(scoring):
    [hit] = paper_keyword_search(scoring, ["dog house"], top_k=1)
    assert hit.chunk.chunk_id == cid("c")
    assert hit.chunk.title == "Gamma"
    assert hit.matched == ["The dog house is red.", "Another dog house stands near the cat."]


def test_keywords_are_literal_and_case_insensitive(scoring):
    for keyword in ["$5.00 (approx.)", "[sic]", "NAÏVE CAFÉ", "東京", '"quoted"']:
        hits = paper_keyword_search(scoring, [keyword], top_k=5)
        assert [hit.chunk.chunk_id for hit in hits] == [cid("e")], keyword
        assert hits[0].score == len(keyword)
    assert paper_keyword_search(scoring, [".*"], top_k=5) == []
    assert [hit.chunk.chunk_id for hit in keyword_search(scoring, ["conCATenate"], top_k=5).hits] == [cid("b")]


def test_top_k_limits_and_duplicates_count_once(scoring):
    assert len(paper_keyword_search(scoring, ["cat"], top_k=2)) == 2
    once = paper_keyword_search(scoring, ["cat"], top_k=5)
    twice = paper_keyword_search(scoring, ["cat", "CAT "], top_k=5)
    assert [(h.chunk.chunk_id, h.score) for h in once] == [(h.chunk.chunk_id, h.score) for h in twice]


def test_semantic_search_matches_brute_force(sample_index, embedder):
    snapshot = open_index(str(sample_index))
    matrix = SentenceMatrix(*index_dump.sentence_vectors(snapshot))
    query = embedder.encode_queries(["Which element was named after Poland?"])[0]
    expected = matrix.best_sentence_ranking(query, 3)

    hits = retrieval.semantic_search(snapshot, query, top_k=3)
    assert [hit.chunk.chunk_id for hit in hits] == [chunk for chunk, _ in expected]
    for hit, (_, score) in zip(hits, expected):
        assert hit.score == pytest.approx(score, abs=1e-5)
    assert "Polonium" in hits[0].chunk.title or "Poland" in " ".join(hits[0].matched)


def test_naive_search_ranks_chunks_by_their_stored_vectors(sample_index, embedder):
    snapshot = open_index(str(sample_index))
    ids, vectors = index_dump.chunk_vectors(snapshot)
    assert len(ids) == snapshot.chunk_count and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for question in ["Which element was named after Poland?", "Where did Pierre Curie die?", "a sanatorium"]:
        query = embedder.encode_queries([question])[0]
        hits = retrieval.naive_search(snapshot, query, top_k=4)
        expected = vector_ranking(ids, vectors, query, 4)
        assert [hit.chunk.chunk_id for hit in hits] == [cid for cid, _ in expected]
        assert [hit.score for hit in hits] == pytest.approx([score for _, score in expected], abs=1e-5)
        assert all(hit.chunk.text for hit in hits)


def test_chunks_by_id_give_text_and_neighbours(sample_index):
    snapshot = open_index(str(sample_index))
    chunk = snapshot.chunks.by_id([cid("radium")])[cid("radium")]
    assert chunk.title == "Radium"
    assert chunk.text.startswith("Radium is a chemical element")
    assert chunk.previous_chunk_id is None and chunk.next_chunk_id is None
    assert snapshot.chunks.by_id(["nope", cid("no-such-doc")]) == {}
