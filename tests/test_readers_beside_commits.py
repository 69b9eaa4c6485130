"""`arag-index list` and `info` while a writer commits batch after batch (a watcher's pace): cleanup
keeps the versions of the last READER_GRACE, so a reader that read the manifest a few commits ago
still finds the versions it names; where one is gone all the same, the reader goes back to the
manifest, and says "damaged" only where nothing was committed since."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index import compaction, snapshot, writer
from arag_mcp.indexer.index.manifest import check_manifest
from arag_mcp.indexer.index.reading import VersionGone
from arag_mcp.indexer.index.snapshot import checked_index, list_documents
from arag_mcp.indexer.indexes import Index

from .conftest import HASHED_MODEL, run_cli

QUIET = BuildOptions(model=HASHED_MODEL, progress=False)
BATCHES = 12


@pytest.fixture
def notes_index(tmp_path: Path) -> tuple[Path, Path]:
    notes = tmp_path / "notes"
    notes.mkdir()
    for number in range(4):
        (notes / f"note-{number}.md").write_text(f"# Note {number}\n\nNote {number} is short.\n")
    Index(str(tmp_path / "idx")).add([notes], QUIET)
    return notes, tmp_path / "idx"


def rewrite(notes: Path, batch: int) -> None:
    (notes / f"note-{batch % 4}.md").write_text(f"# Note {batch}\n\nBatch {batch} rewrote it.\n")


@pytest.mark.parametrize("grace", [timedelta(0), writer.READER_GRACE], ids=["no grace", "the grace"])
def test_a_reader_a_few_commits_behind(notes_index: tuple[Path, Path], monkeypatch, grace: timedelta):
    notes, index = notes_index
    monkeypatch.setattr(writer, "READER_GRACE", grace)
    monkeypatch.setattr(compaction, "COMPACT_FRAGMENTS", 1)  # each commit compacts and cleans up
    read_before = check_manifest(str(index))  # a reader reads the manifest, then is slow
    for batch in range(3):
        time.sleep(1.2)  # cleanup keeps what is within a second of the version a command started from
        rewrite(notes, batch)
        Index(str(index)).sync(QUIET)
    if grace:
        assert len(list_documents(str(index), read_before)) == 4  # its versions are still there
        return
    with pytest.raises(VersionGone):
        list_documents(str(index), read_before)
    stale = iter([read_before])
    monkeypatch.setattr(snapshot, "check_manifest", lambda uri: next(stale, None) or check_manifest(uri))
    assert len(list_documents(str(index))) == 4  # back to the manifest, not "damaged"


def test_list_and_info_beside_a_writer_committing_batches(notes_index: tuple[Path, Path], monkeypatch):
    notes, index = notes_index
    monkeypatch.setattr(compaction, "COMPACT_FRAGMENTS", 1)  # each commit compacts and cleans up
    done = threading.Event()
    failures: list[BaseException] = []

    def commit_batches() -> None:
        try:
            for batch in range(BATCHES):
                rewrite(notes, batch)
                Index(str(index)).sync(QUIET)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)
        finally:
            done.set()

    committing = threading.Thread(target=commit_batches)
    committing.start()
    reads = 0
    try:
        while not done.is_set():
            assert len(list_documents(str(index))) == 4
            assert checked_index(str(index)).chunk_count == 4
            reads += 1
    finally:
        committing.join(300)
    assert not failures, failures
    assert reads >= 3
    listed = run_cli("arag_mcp.indexer", "list", "--index", str(index))
    assert listed.returncode == 0 and "damaged" not in listed.stderr
