"""The keyword anchors of bench/speed.py: our ranking alone is keyword_search's, and each anchor ranks real chunks."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.snapshot import open_index

from .conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

import keyword_anchors  # noqa: E402

TITLES = ["Alpha", "Beta", "Gamma", "Delta"]
TEXTS = [
    "The cat sat. The cat ran. A dog barked.",
    "A dog house is red. Polonium was found in 1898.",
    "The dog house stands near the cat.",
    "Nothing relevant here, not even a café.",
]


@pytest.mark.parametrize(
    "keywords",
    [
        ["cat"],
        ["dog house"],
        ["cat", "dog"],
        ["Alpha", "cat"],
        ["cat", "dog house", "Zeta"],
        ["$5.00", "CAT"],
        ["absent"],
    ],
)
def test_our_ranking_alone_is_the_ranking_keyword_search_returns(scoring_index: Path, keywords: list[str]):
    snapshot = open_index(str(scoring_index))
    hits = keyword_search(snapshot, keywords, 3).hits
    expected = snapshot.catalogue.numbers_of([hit.chunk.chunk_id for hit in hits]).tolist()
    assert keyword_anchors.our_ranking(snapshot, keywords, 3) == expected
    assert bool(expected) == (keywords != ["absent"])


def test_lancedb_ranks_the_chunk_with_the_rare_word_first(tmp_path: Path):
    docs = keyword_anchors.documents(TITLES, TEXTS)
    batches = [pa.table({"number": [0, 1], "document": docs[:2]}), pa.table({"number": [2, 3], "document": docs[2:]})]
    anchor = keyword_anchors.lancedb_anchor(batches, tmp_path)
    assert anchor.name == "lancedb_fts"
    assert anchor.ranking(["polonium", "dog"], 2) == [1, 2]
    assert anchor.ranking(["Delta"], 5) == [3]  # the title is indexed with the text
    assert anchor.ranking(["cafe"], 5) == [3]  # ASCII folding
    assert anchor.ranking(["absent"], 5) == []


def test_bm25s_ranks_the_chunk_with_the_rare_word_first():
    pytest.importorskip("bm25s", reason='the bench extra: pip install -e ".[bench]"')
    (anchor,) = keyword_anchors.bm25s_anchors(keyword_anchors.documents(TITLES, TEXTS), ["numpy"])
    assert anchor.name == "bm25s"
    assert anchor.ranking(["polonium", "dog"], 2) == [1, 2]
    assert anchor.ranking(["Delta"], 5) == [3]
    assert anchor.ranking(["absent"], 5) == []


def test_bm25s_is_left_out_with_a_note_where_its_corpus_would_not_fit(tmp_path: Path, monkeypatch):
    pytest.importorskip("bm25s", reason='the bench extra: pip install -e ".[bench]"')
    monkeypatch.setattr(keyword_anchors, "BM25S_BYTES_PER_CHAR", 2**50)
    anchors, notes = keyword_anchors.build_anchors(TITLES, TEXTS, tmp_path)
    assert [anchor.name for anchor in anchors] == ["lancedb_fts"]
    assert len(notes) == 1 and notes[0].startswith("bm25s left out: its tokenised corpus needs about")
