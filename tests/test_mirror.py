"""The mirror (indexer/index/mirror.py): written by every build of a local index, named by the table
versions the manifest commits, read instead of the tables where it is whole, and answering exactly
as the tables do; where it is missing or damaged the tables answer."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from arag_mcp.indexer.build import BuildOptions, build_index, sync_index
from arag_mcp.indexer.index import mirror, snapshot
from arag_mcp.indexer.index.manifest import check_manifest
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.server.search.keywords import keyword_search

QUERIES = [["Curie"], ["Marie Curie", "radium"], ["river", "born in", "polonium"], ["東京"], ["no such word"]]


def write_corpus(folder: Path, version: int) -> None:
    records = [
        {"id": f"doc-{n}", "title": f"Doc {n}", "text": f"Marie Curie was born in Warsaw {n} times. {text}"}
        for n, text in enumerate(
            [
                "Radium and polonium came from pitchblende.",
                "The river Vistula runs through Warsaw.",
                "東京の東京駅 is a station in Tokyo.",
                f"Edition {version} of the river guide.",
            ]
        )
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), "utf-8")


def answers(index: Path) -> list[list[tuple[str, float, tuple[str, ...], tuple[str, ...]]]]:
    opened = open_index(str(index))
    return [
        [
            (hit.chunk.chunk_id, hit.score, tuple(hit.keywords), tuple(hit.matched))
            for hit in keyword_search(opened, keywords, 5).hits
        ]
        for keywords in QUERIES
    ]


@pytest.fixture
def index(tmp_path: Path) -> Path:
    write_corpus(tmp_path / "corpus", 1)
    build_index([tmp_path / "corpus"], str(tmp_path / "idx"), BuildOptions(progress=False))
    return tmp_path / "idx"


def test_each_build_leaves_one_mirror_named_by_its_tables(index: Path, tmp_path: Path):
    [first] = (index / mirror.FOLDER).iterdir()
    assert first.name == mirror.folder_name(check_manifest(str(index)).tables)
    write_corpus(tmp_path / "corpus", 2)
    sync_index(str(index), BuildOptions(progress=False))
    [second] = (index / mirror.FOLDER).iterdir()
    assert second.name == mirror.folder_name(check_manifest(str(index)).tables) != first.name
    opened = open_index(str(index))
    assert opened.keywords.mirror is not None and opened.chunks.mirror is opened.keywords.mirror


def test_the_mirror_answers_as_the_tables_do(index: Path, monkeypatch):
    from_mirror = answers(index)
    assert any(from_mirror)
    monkeypatch.setattr(snapshot, "open_mirror", lambda *args: None)
    assert answers(index) == from_mirror


def test_a_damaged_or_missing_mirror_leaves_the_tables_to_answer(index: Path, caplog):
    expected = answers(index)
    [folder] = (index / mirror.FOLDER).iterdir()
    texts = folder / mirror.TEXTS_FILE
    texts.write_bytes(texts.read_bytes()[:100])
    with caplog.at_level(logging.WARNING):
        opened = open_index(str(index))
    assert opened.chunks.mirror is None
    assert "is not used" in caplog.text
    assert answers(index) == expected
    shutil.rmtree(folder)
    assert open_index(str(index)).keywords.mirror is None
    assert answers(index) == expected


def test_a_snapshot_keeps_reading_its_mirror_after_a_build_removes_it(index: Path, tmp_path: Path):
    opened = open_index(str(index))
    before = [[hit.chunk.chunk_id for hit in keyword_search(opened, ["river"], 5).hits]]
    write_corpus(tmp_path / "corpus", 2)
    sync_index(str(index), BuildOptions(progress=False))
    assert len(list((index / mirror.FOLDER).iterdir())) == 1
    assert [[hit.chunk.chunk_id for hit in keyword_search(opened, ["river"], 5).hits]] == before
    assert opened.chunks.at(opened.catalogue.numbers_of([before[0][0]]))


def test_a_sync_with_nothing_changed_writes_the_mirror_a_build_lacks(index: Path):
    """An index built before mirrors gets one at its next sync."""
    shutil.rmtree(index / mirror.FOLDER)
    expected_tables = check_manifest(str(index)).tables
    from_tables = answers(index)
    summary = sync_index(str(index), BuildOptions(progress=False))
    assert (summary.added, summary.updated, summary.removed) == (0, 0, 0)
    assert check_manifest(str(index)).tables == expected_tables
    [folder] = (index / mirror.FOLDER).iterdir()
    assert folder.name == mirror.folder_name(expected_tables)
    assert open_index(str(index)).keywords.mirror is not None
    assert answers(index) == from_tables


def test_a_build_served_from_its_mirror_answers_keywords_without_lancedb(index: Path):
    """LanceDB's import is much of a server's start: a keyword search and a chunk read need none of it."""
    script = (
        "import sys\n"
        "from arag_mcp.indexer.index.snapshot import open_index\n"
        "from arag_mcp.server.search.keywords import keyword_search\n"
        f"snapshot = open_index({str(index)!r})\n"
        "hits = keyword_search(snapshot, ['Marie Curie', 'river'], 5).hits\n"
        "assert hits and hits[0].chunk.text, hits\n"
        "print('lancedb' in sys.modules)\n"
        "snapshot.sentences\n"
        "print('lancedb' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"], result.stderr
