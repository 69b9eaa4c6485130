"""keyword_search through the keyword segments gives exactly its definitions (the package's definition.py):
whole folded words with titles (the default), and the paper's lower-cased substrings, checked on
an index that went through incremental builds (removed chunks, several segments, a word in
several rows of one terms file) and through random edits and merges."""

from __future__ import annotations

import json
import random
from pathlib import Path

import index_dump
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.keywords import search as keyword_matching
from arag_mcp.indexer.index.keywords import segment_writer, terms
from arag_mcp.indexer.index.keywords.definition import WordCorpus, keyword_ranking
from arag_mcp.indexer.index.keywords.segment_writer import KeywordSegments
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index

from ..conftest import HASHED_MODEL

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
    """Built, then partly edited, deleted and extended, with no merge: several segments, with
    removed chunks."""
    folder = tmp_path_factory.mktemp("churn")
    corpus, index = folder / "corpus", folder / "idx"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(terms, "SEGMENT_POSTINGS", 700)
        patch.setattr(KeywordSegments, "due", lambda self: [])
        write_corpus(corpus, seed=1, count=40)
        Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False, flush_sentences=100))
        kept = (corpus / "corpus.jsonl").read_text("utf-8").splitlines()[:10]
        write_corpus(corpus, seed=2, count=30)  # docs 10-29 change, 30-39 disappear
        changed = (corpus / "corpus.jsonl").read_text("utf-8").splitlines()[10:]
        (corpus / "corpus.jsonl").write_text("\n".join(kept + changed), "utf-8")
        with (corpus / "corpus.jsonl").open("a", encoding="utf-8") as handle:
            handle.write("\n" + json.dumps({"id": "extra", "title": "Extra", "text": "The doghouse of Marie. 東京都."}))
        Index(str(index)).sync(BuildOptions(model=HASHED_MODEL, progress=False, flush_sentences=100))
    return index


def test_the_churned_index_has_several_segments_with_removed_chunks(churned_index: Path):
    snapshot = open_index(str(churned_index))
    segments = snapshot.manifest.segments
    assert len(segments) > 1 and any(entry.dead_count for entry in segments)
    part = snapshot.keywords.parts[0]
    assert len(part.word_rows) > len(part.words)  # a word split over rows of one terms file
    assert len(snapshot.catalogue) == snapshot.chunks.table.count_rows() == 31


@pytest.mark.parametrize("read_batch", [keyword_matching.PHRASE_READ_BATCH, 1])
@pytest.mark.parametrize("match", ["word", "substring"])
def test_keyword_search_equals_brute_force(churned_index: Path, read_batch: int, match: str, monkeypatch):
    """Also with phrase texts read one chunk at a time, so the bound stops reading early."""
    monkeypatch.setattr(keyword_matching, "PHRASE_READ_BATCH", read_batch)
    snapshot = open_index(str(churned_index))
    assert_equals_brute_force(snapshot, match)


def assert_equals_brute_force(snapshot, match: str, rounds: int = 80) -> None:
    chunks = index_dump.all_chunks(snapshot)
    ids, titles, texts = [c.chunk_id for c in chunks], [c.title for c in chunks], [c.text for c in chunks]
    words = WordCorpus(ids, titles, texts, [c.tokens for c in chunks])
    checked = 0
    for keywords in queries(seed=3)[-rounds:]:
        for top_k in (1, 2, 5, 50):
            found = keyword_matching.keyword_search(snapshot, keywords, top_k, match)
            got = [(hit.chunk.chunk_id, hit.score) for hit in found.hits]
            if match == "word":
                assert got == words.ranking(keywords, top_k), keywords
            else:
                assert got == keyword_ranking(ids, texts, keywords, top_k), keywords
            checked += bool(got)
    assert checked > min(200, rounds)


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


def test_random_edits_and_merges_keep_keyword_search_equal_to_brute_force(tmp_path: Path, monkeypatch):
    """Adds, removes, edits and renames of files, each synced, with merges forced at random (two
    segments of a tier merged, or none): after each, both match modes give their definitions."""
    rng = random.Random(7)
    corpus, index = tmp_path / "corpus", tmp_path / "idx"
    corpus.mkdir()
    files: dict[str, list[dict[str, str]]] = {}

    def record(number: int) -> dict[str, str]:
        sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10))) + "." for _ in range(6)]
        return {"id": f"r{number}", "title": f"{rng.choice(WORDS)} {rng.choice(WORDS)}", "text": " ".join(sentences)}

    def write(name: str) -> None:
        (corpus / name).write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in files[name]), "utf-8")

    made = 0
    for round_number in range(6):
        for _ in range(rng.randint(1, 3)):
            action = rng.choice(["add", "add", "remove", "edit", "rename"] if files else ["add"])
            name = rng.choice(sorted(files)) if files else None
            if action == "add":
                name = f"f{made}.jsonl"
                files[name] = [record(made * 10 + at) for at in range(rng.randint(1, 4))]
                made += 1
                write(name)
            elif action == "remove":
                del files[name]
                (corpus / name).unlink()
            elif action == "edit":
                files[name][rng.randrange(len(files[name]))] = record(made * 10 + 9)
                made += 1
                write(name)
            else:
                renamed = f"moved-{made}-{name}"
                made += 1
                (corpus / name).rename(corpus / renamed)
                files[renamed] = files.pop(name)
        monkeypatch.setattr(segment_writer, "MERGE_FACTOR", rng.choice([2, 100]))
        monkeypatch.setattr(segment_writer, "SMALLEST_TIER", 4)
        if round_number == 0:
            Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
        else:
            Index(str(index)).sync(BuildOptions(model=HASHED_MODEL, progress=False))
        snapshot = open_index(str(index))
        assert len(snapshot.catalogue) == snapshot.chunks.table.count_rows()
        assert sorted(snapshot.catalogue.ids()) == sorted(snapshot.chunks.table.to_arrow()["chunk_id"].to_pylist())
        for match in ("word", "substring"):
            assert_equals_brute_force(snapshot, match, rounds=12)
    assert len(list((index / "keywords").iterdir())) == len(snapshot.manifest.segments)
