"""keyword_search through the terms table gives exactly its definitions (bench/brute_force.py):
whole folded words with titles (the default), and the paper's lower-cased substrings, checked on
an index that went through incremental builds (deleted rows, several fragments) and a
multi-segment terms table."""

from __future__ import annotations

import json
import random
from pathlib import Path

import index_dump
import pytest
from arag_mcp.indexer.build import BuildOptions, build_index, sync_index
from arag_mcp.indexer.index import snapshot as snapshot_module
from arag_mcp.indexer.index import terms
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.server.search import keywords as keyword_matching
from brute_force import WordCorpus, keyword_ranking

WORDS = (
    "the there other cat catalogue concatenate dog house doghouse river riverside born reborn film "
    "university universe Marie Curie curium radium polonium naïve café 東京 東京都 co-op e.g. U.S. 3.14 "
    "1867 x_y snake_case O'Neil don't mother brother ATHENS athens Athena résumé ÉCOLE école Ｔｏｋｙｏ Tokyo ﬁlm Straße 東京の歴史 東京駅 서울에서 ｶﾞｽ ガス ที่นี่"
).split()


def write_corpus(folder: Path, seed: int, count: int) -> None:
    rng = random.Random(seed)
    records = []
    for number in range(count):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))) + "." for _ in range(12)]
        title = f"Doc {number} {rng.choice(WORDS)}" if number % 3 else f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
        records.append({"id": f"doc-{number}", "title": title, "text": " ".join(sentences)})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), "utf-8")


def queries(seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    pieces = WORDS + [
        "he",
        "at",
        "e",
        "ver",
        "ö",
        "cat dog",
        "dog house",
        "e.g",
        "3.1",
        "-op",
        "'",
        " ",
        "no-such",
        "京",
        "歴史",
        "서울",
        "東京 駅",
    ]
    pieces += [f"{a} {b}" for a, b in zip(rng.sample(WORDS, 10), rng.sample(WORDS, 10))]
    pieces += [w.upper() for w in rng.sample(WORDS, 5)]
    return [rng.sample(pieces, rng.randint(1, 3)) for _ in range(80)] + [[p] for p in pieces]


@pytest.fixture(scope="module")
def churned_index(tmp_path_factory) -> Path:
    """Built, then partly edited, deleted and extended: several fragments and deleted rows."""
    folder = tmp_path_factory.mktemp("churn")
    corpus, index = folder / "corpus", folder / "idx"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(terms, "SEGMENT_POSTINGS", 700)
        write_corpus(corpus, seed=1, count=40)
        build_index([corpus], str(index), BuildOptions(progress=False, flush_sentences=100))
        write_corpus(corpus, seed=2, count=30)  # docs 0-29 change, 30-39 disappear
        with (corpus / "corpus.jsonl").open("a", encoding="utf-8") as handle:
            handle.write("\n" + json.dumps({"id": "extra", "title": "Extra", "text": "The doghouse of Marie. 東京都."}))
        sync_index(str(index), BuildOptions(progress=False, flush_sentences=100))
    return index


def test_terms_table_has_several_segments(churned_index: Path):
    snapshot = open_index(str(churned_index))
    assert len(snapshot.keywords.word_rows) > len(snapshot.keywords.words)  # a word split over segments
    assert len(snapshot.catalogue) == snapshot.chunks.table.count_rows() == 31


@pytest.mark.parametrize("read_batch", [keyword_matching.PHRASE_READ_BATCH, 1])
@pytest.mark.parametrize("match", ["word", "substring"])
@pytest.mark.parametrize("source", ["mirror", "tables"])
def test_keyword_search_equals_brute_force(churned_index: Path, read_batch: int, match: str, source: str, monkeypatch):
    """Also with phrase texts read one chunk at a time, so the bound stops reading early; from the
    build's mirror and from the tables alone."""
    monkeypatch.setattr(keyword_matching, "PHRASE_READ_BATCH", read_batch)
    if source == "tables":
        monkeypatch.setattr(snapshot_module, "open_mirror", lambda *args: None)
    snapshot = open_index(str(churned_index))
    assert (snapshot.keywords.mirror is None) == (source == "tables")
    chunks = index_dump.all_chunks(snapshot)
    ids, titles, texts = [c.chunk_id for c in chunks], [c.title for c in chunks], [c.text for c in chunks]
    words = WordCorpus(ids, titles, texts, [c.tokens for c in chunks])
    checked = 0
    for keywords in queries(seed=3):
        for top_k in (1, 2, 5, 50):
            found = keyword_matching.keyword_search(snapshot, keywords, top_k, match)
            got = [(hit.chunk.chunk_id, hit.score) for hit in found.hits]
            if match == "word":
                assert got == words.ranking(keywords, top_k), keywords
            else:
                assert got == keyword_ranking(ids, texts, keywords, top_k), keywords
            checked += bool(got)
    assert checked > 200


def test_snippets_are_the_sentences_holding_a_keyword(churned_index: Path):
    snapshot = open_index(str(churned_index))
    [hit] = keyword_matching.keyword_search(snapshot, ["DOGHOUSE of"], top_k=1).hits
    assert hit.matched == ["The doghouse of Marie."]


def test_chunk_rows_are_found_by_id_after_incremental_builds(churned_index: Path):
    snapshot = open_index(str(churned_index))
    table = snapshot.chunks.table.search().select(["chunk_id", "title"]).limit(None).to_arrow()
    titles = dict(zip(table["chunk_id"].to_pylist(), table["title"].to_pylist()))
    ids = sorted(titles)
    unknown = ["", ids[0][:-1], ids[len(ids) // 2] + "0", "~" + ids[-1]]  # before, between and after the ids
    found = snapshot.chunks.by_id([*reversed(ids), *unknown, ids[0]])
    assert {cid: chunk.title for cid, chunk in found.items()} == titles
