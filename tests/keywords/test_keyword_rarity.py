"""keyword_search's default scores weigh a keyword by its rarity (BM25), so a rare name outranks a
frequent word repeated in a long chunk, and on an exact tie the chunk titled with the keyword comes
first; small real texts (fixtures/rarity.jsonl) in a real index. The paper's scores are kept in
substring mode."""

from __future__ import annotations

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.snapshot import IndexSnapshot, open_index
from arag_mcp.indexer.indexes import Index

from ..conftest import FIXTURES, HASHED_MODEL


def cid(doc_id: str) -> str:
    return f"{doc_key(doc_id)}-0"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> IndexSnapshot:
    index = tmp_path_factory.mktemp("rarity") / "idx"
    Index(str(index)).add([FIXTURES / "rarity.jsonl"], BuildOptions(model=HASHED_MODEL, progress=False))
    return open_index(str(index))


def ranked(snapshot: IndexSnapshot, keywords: list[str], top_k: int, match: str = "word") -> list[str]:
    return [hit.chunk.chunk_id for hit in keyword_search(snapshot, keywords, top_k, match).hits]


def test_a_rare_name_outranks_a_frequent_word_repeated_in_a_long_chunk(snapshot):
    keywords = ["Will Arnett", "married"]  # "married": 7 times in King John's long chunk, in 4 chunks of 9
    assert ranked(snapshot, keywords, top_k=1) == [cid("arnett")]
    top = ranked(snapshot, keywords, top_k=3)
    assert {cid("arnett"), cid("arrested")} <= set(top)  # the second Will Arnett chunk is not crowded out
    assert ranked(snapshot, keywords, top_k=1, match="substring") == [cid("king-john")]  # the paper's scores


def test_a_repeated_word_saturates(snapshot):
    scores = {hit.chunk.chunk_id: hit.score for hit in keyword_search(snapshot, ["married"], top_k=5).hits}
    assert scores[cid("king-john")] < 2 * scores[cid("poehler")]  # 7 times against once


def test_on_a_tie_the_chunk_titled_with_the_keyword_comes_first(snapshot):
    # the same text, and "Lothair II" twice in each (title and text); "bertha"'s id sorts first
    assert cid("bertha") < cid("lothair")
    hits = keyword_search(snapshot, ["Lothair II"], top_k=2).hits
    assert [hit.chunk.chunk_id for hit in hits] == [cid("lothair"), cid("bertha")]
    assert hits[0].score == hits[1].score
    assert ranked(snapshot, ["lothair ii", "Lotharingia"], top_k=2) == [cid("lothair"), cid("bertha")]
    assert ranked(snapshot, ["Lothair II"], top_k=2, match="substring") == [cid("bertha"), cid("lothair")]
