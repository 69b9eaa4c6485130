"""Keyword segments (indexer/index/keywords/segments.py): a commit writes one segment of what it added and a
file of removed chunks, leaving every other segment file as it was; merges replace segments behind
a manifest of their own, after the commit or, for a watcher's batches, later; a kill -9 in a commit or a merge leaves the committed index whole; readers
see committed states only, and a snapshot keeps reading segments a merge removed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.ids import DOC_KEY_CHARS
from arag_mcp.indexer.index.keywords import segment_writer
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.keywords.segment_store import FOLDER
from arag_mcp.indexer.index.keywords.segment_writer import KeywordSegments
from arag_mcp.indexer.index.keywords.segments import FILES, SEGMENT_COLUMNS
from arag_mcp.indexer.index.manifest import check_manifest, write_manifest
from arag_mcp.indexer.index.reading import scan
from arag_mcp.indexer.index.schema import CHUNKS, ChunkColumn
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index

from ..conftest import HASHED_MODEL

QUIET = BuildOptions(model=HASHED_MODEL, progress=False)
QUERIES = [["Curie"], ["Marie Curie", "radium"], ["river", "born in", "polonium"], ["東京"], ["no such word"]]


def write_note(folder: Path, number: int, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"note-{number}.md").write_text(f"# Note {number}\n\nMarie Curie was born in Warsaw. {text}\n", "utf-8")


def answers(index: Path) -> list[list[tuple[str, float]]]:
    opened = open_index(str(index))
    return [
        [(hit.chunk.chunk_id, hit.score) for hit in keyword_search(opened, keywords, 5).hits] for keywords in QUERIES
    ]


def segment_files(index: Path) -> dict[Path, tuple[int, int]]:
    return {
        path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in (index / FOLDER).rglob("*") if path.is_file()
    }


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(segment_writer, "MERGE_FACTOR", 100)
    for number, text in enumerate(
        ["Radium and polonium.", "The river Vistula.", "東京の東京駅 is in Tokyo.", "Edition 1."]
    ):
        write_note(tmp_path / "notes", number, text)
    Index(str(tmp_path / "idx")).add([tmp_path / "notes"], QUIET)
    return tmp_path / "idx"


def test_a_commit_adds_one_segment_and_leaves_the_others_untouched(index: Path):
    before = segment_files(index)
    write_note(index.parent / "notes", 3, "Edition 2 of the river guide.")
    Index(str(index)).sync(QUIET)
    after = segment_files(index)
    assert {path: after[path] for path in before} == before
    added = set(after) - set(before)
    [first, second] = check_manifest(str(index)).segments
    assert first.dead_count == 1 and {path.parent.name for path in added} == {first.name, second.name}
    assert [path.name for path in added if path.parent.name == first.name] == [first.dead]
    assert second.chunks == 1


def test_a_commit_of_more_chunks_than_a_written_segment_holds_writes_several_that_answer_alike(
    index: Path, monkeypatch: pytest.MonkeyPatch
):
    for written_chunks in (2, segment_writer.WRITTEN_CHUNKS):
        monkeypatch.setattr(segment_writer, "WRITTEN_CHUNKS", written_chunks)
        copy = index.parent / f"idx-{written_chunks}"
        Index(str(copy)).add([index.parent / "notes"], QUIET)
        sizes = [entry.chunks for entry in check_manifest(str(copy)).segments]
        assert sizes == ([2, 2] if written_chunks == 2 else [4])
        assert answers(copy) == answers(index)


def test_a_long_commit_publishes_each_whole_segment_as_its_chunks_come_and_masks_what_it_removes_there(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A commit of a million chunks (a Ray build's) holds one segment's rows at a time: each
    WRITTEN_CHUNKS chunks appended are published at once, and named by the next commit."""
    monkeypatch.setattr(segment_writer, "WRITTEN_CHUNKS", 3)
    rows = scan(open_index(str(index)).tables[CHUNKS].search().select(list(SEGMENT_COLUMNS))).read_all()
    rows = rows.sort_by(ChunkColumn.ID)
    assert rows.num_rows == 4
    other = tmp_path / "other"
    other.mkdir()
    writing = KeywordSegments(str(other), [])
    for at in range(3):
        writing.append(rows.slice(at, 1))
    assert len(writing.flushed) == 1 and writing.pending == [] and len(list((other / FOLDER).iterdir())) == 1
    writing.remove([rows[ChunkColumn.ID][0].as_py()[:DOC_KEY_CHARS]])
    writing.append(rows.slice(3, 1))
    assert len(writing.flushed) == 1 and sum(table.num_rows for table in writing.pending) == 1
    committed = writing.commit()
    assert [(entry.chunks, entry.dead_count) for entry in committed] == [(3, 1), (1, 0)]
    assert writing.flushed == [] and writing.pending == []


def test_merges_answer_as_the_segments_they_replace(index: Path):
    for number in range(4, 8):
        write_note(index.parent / "notes", number, f"The river {number}.")
        if number == 6:
            os.remove(index.parent / "notes" / "note-1.md")
        Index(str(index)).sync(QUIET)
    manifest = check_manifest(str(index))
    assert len(manifest.segments) == 5 and manifest.segments[0].dead_count == 1
    expected = answers(index)
    opened = open_index(str(index))
    merging = KeywordSegments(str(index), manifest.segments)
    merged = merging.merge(merging.entries[:3])
    write_manifest(replace(manifest, segments=tuple(merged)))
    merging.remove_unused()
    merged_sizes = [(entry.chunks, entry.dead_count) for entry in check_manifest(str(index)).segments]
    assert merged_sizes == [(5, 0), (1, 0), (1, 0)]
    assert sorted(path.name for path in (index / FOLDER).iterdir()) == sorted(entry.name for entry in merged)
    assert answers(index) == expected
    # the snapshot opened before keeps reading the segments the merge removed
    assert [[(h.chunk.chunk_id, h.score) for h in keyword_search(opened, k, 5).hits] for k in QUERIES] == expected


def test_batches_that_leave_merges_for_later_commit_unmerged_and_merge_segments_then_merges(
    index: Path, monkeypatch: pytest.MonkeyPatch
):
    """A watcher's batches commit without merging (BuildOptions.merge_segments); it merges when idle."""
    monkeypatch.setattr(segment_writer, "MERGE_FACTOR", 2)
    monkeypatch.setattr(segment_writer, "SMALLEST_TIER", 1)
    notes = index.parent / "notes"
    for number in (4, 5, 6):
        write_note(notes, number, f"The river {number}.")
        Index(str(index)).sync_paths([notes / f"note-{number}.md"], replace(QUIET, merge_segments=False))
    assert [entry.chunks for entry in check_manifest(str(index)).segments] == [4, 1, 1, 1]
    expected = answers(index)
    named = Index(str(index)).merge_segments()
    merged = check_manifest(str(index)).segments
    assert named == len(merged) < 4 and sum(entry.live for entry in merged) == 7
    assert sorted(path.name for path in (index / FOLDER).iterdir()) == sorted(entry.name for entry in merged)
    assert answers(index) == expected
    assert Index(str(index)).merge_segments() == 0  # nothing is due now


def test_a_build_opened_after_another_takes_over_what_it_left_unchanged(index: Path):
    """A server follows each commit by opening the new build with the one it serves (`previous`):
    the segments both name come over mapped, with the words derived from them; what it answers is
    what a cold open answers, through a removal, an addition and a merge."""
    served = open_index(str(index))
    for step in ("remove", "add", "merge"):
        notes = index.parent / "notes"
        if step == "remove":
            os.remove(notes / "note-1.md")
        else:
            write_note(notes, 10, "The river Oder and radium.")
        Index(str(index)).sync(QUIET)
        if step == "merge":
            manifest = check_manifest(str(index))
            merging = KeywordSegments(str(index), manifest.segments)
            merged = merging.merge(merging.entries)
            write_manifest(replace(manifest, segments=tuple(merged)))
        followed = open_index(str(index), previous=served)
        before = {segment.name: segment for segment in served.chunks.segments.segments}
        kept = [segment for segment in followed.chunks.segments.segments if segment.name in before]
        assert all(segment is before[segment.name] for segment in kept)
        assert len(kept) == (0 if step == "merge" else len(before))
        derived = {part.segment.name: part.folded_spellings for part in served.keywords.parts}
        for part in followed.keywords.parts:
            assert (part.folded_spellings is derived.get(part.segment.name)) == (part.segment in kept)
        found = [[(h.chunk.chunk_id, h.score) for h in keyword_search(followed, k, 5).hits] for k in QUERIES]
        assert found == answers(index), step
        assert list(followed.catalogue.ids()) == list(open_index(str(index)).catalogue.ids())
        served = followed


def test_a_missing_segment_file_is_one_line_naming_the_fix(index: Path):
    [entry] = check_manifest(str(index)).segments
    (index / FOLDER / entry.name / "texts.arrow").unlink()
    with pytest.raises(IndexStoreError, match=r"keyword segment .* cannot be read .*arag-index sync --index") as caught:
        open_index(str(index))
    assert "\n" not in str(caught.value)


CUT_UNDER_A_READER = """
import os, sys
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.keywords.search import keyword_search
opened = open_index(sys.argv[1])
keyword_search(opened, ["radium"], 5)  # every file opened
for path in sys.argv[2:]:
    os.chmod(path, 0o644)
    os.truncate(path, os.path.getsize(path) // 2)
try:
    for keywords in (["Curie"], ["Marie Curie", "radium"], ["river"]):
        keyword_search(opened, keywords, 5)
except IndexStoreError as error:
    print(error)
"""


@pytest.mark.parametrize("cut", ["terms.arrow", "texts.arrow", "terms.arrow texts.arrow"])
def test_a_segment_file_cut_short_under_a_reader_is_one_line_not_a_signal(index: Path, cut: str):
    """A file cut short after a reader opened it (a copy of another index over this one) is found
    short by the read that needs it, where a mapped page would be SIGBUS: postings cut short are one
    line naming sync; texts cut short are read from the chunks table instead."""
    [entry] = check_manifest(str(index)).segments
    paths = [str(index / FOLDER / entry.name / name) for name in cut.split()]
    result = subprocess.run(
        [sys.executable, "-c", CUT_UNDER_A_READER, str(index), *paths], capture_output=True, text=True
    )
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    if "terms.arrow" not in cut:
        assert not result.stdout and "reading chunk texts from the chunks table" in result.stderr, result.stderr
        return
    [line] = result.stdout.splitlines()
    assert "was cut short or written over after it was opened" in line and "arag-index sync" in line


@pytest.mark.parametrize(
    "name", ["terms.arrow", "texts.arrow", "catalogue.arrow", "vocabulary.arrow", "title_words.arrow"]
)
def test_a_segment_file_of_another_size_is_refused_at_open_and_sync_writes_the_segments_again(index: Path, name: str):
    before = answers(index)
    [entry] = check_manifest(str(index)).segments
    path = index / FOLDER / entry.name / name
    assert dict(entry.sizes)[name] == path.stat().st_size
    assert not path.stat().st_mode & 0o222, "a published segment file is read-only"
    path.chmod(0o644)
    with path.open("ab") as grown:
        grown.write(b"\0" * 8)
    with pytest.raises(IndexStoreError, match=rf"{name} is \d+ bytes, not the \d+ written.*arag-index sync"):
        open_index(str(index))
    Index(str(index)).sync(QUIET)
    assert answers(index) == before
    [rewritten] = check_manifest(str(index)).segments
    assert rewritten.name != entry.name and not (index / FOLDER / entry.name).exists()


@pytest.mark.parametrize("name", FILES)
def test_a_segment_file_written_over_with_other_bytes_of_its_size_is_found_and_sync_writes_it_again(
    index: Path, name: str
):
    """A small file is refused at open (it is read whole, its checksum checked); a large one when its
    checksums are checked (`info`, or a server in the background). A watcher's batch checks sizes
    alone; a sync by hand reads the files through and writes the segments again."""
    before = answers(index)
    [entry] = check_manifest(str(index)).segments
    assert set(entry.checksums) == set(FILES)
    path = index / FOLDER / entry.name / name
    size = path.stat().st_size
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert path.stat().st_size == size
    with pytest.raises(IndexStoreError, match=r"arag-index sync") as caught:
        open_index(str(index)).check()
    assert "\n" not in str(caught.value)
    Index(str(index)).sync(QUIET)
    assert answers(index) == before
    [rewritten] = check_manifest(str(index)).segments
    assert rewritten.name != entry.name and not (index / FOLDER / entry.name).exists()


KILLED = """
import os, signal, sys
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.index.keywords import segment_writer, segments
segment_writer.MERGE_FACTOR, segment_writer.SMALLEST_TIER = 2, 1
where = sys.argv[2]
original = getattr(segments, where)
def killed(folder, *args):
    original(folder, *args)
    os.kill(os.getpid(), signal.SIGKILL)
setattr(segment_writer, where, killed)
Index(sys.argv[1]).sync(BuildOptions(model=sys.argv[3], progress=False))
"""


@pytest.mark.parametrize("where", ["write_segment", "write_merged"])
def test_a_kill_during_a_commit_or_a_merge_leaves_the_committed_index_whole(index: Path, where: str):
    write_note(index.parent / "notes", 4, "The river Oder.")
    Index(str(index)).sync(QUIET)  # two segments: a merge is due at the next commit
    committed_before = check_manifest(str(index)).segments
    write_note(index.parent / "notes", 5, "The river Warta and radium.")
    result = subprocess.run(
        [sys.executable, "-c", KILLED, str(index), where, HASHED_MODEL], capture_output=True, text=True
    )
    assert result.returncode == -9, result.stderr
    manifest = check_manifest(str(index))
    if where == "write_segment":
        assert manifest.segments == committed_before  # the commit never landed
    else:
        assert len(manifest.segments) == 3  # the commit landed; its merge did not
    assert any(answers(index))
    write_note(index.parent / "notes", 6, "The river Bug.")
    Index(str(index)).sync(QUIET)  # the next commit removes what the kill left
    final = check_manifest(str(index)).segments
    assert sorted(path.name for path in (index / FOLDER).iterdir()) == sorted(entry.name for entry in final)
    assert sum(entry.live for entry in final) == open_index(str(index)).chunks.table.count_rows() == 7


def test_readers_beside_commits_and_merges_see_committed_states_only(index: Path, monkeypatch: pytest.MonkeyPatch):
    """Each snapshot's chunks are those of the chunks table at the versions its manifest names."""
    monkeypatch.setattr(segment_writer, "MERGE_FACTOR", 2)
    monkeypatch.setattr(segment_writer, "SMALLEST_TIER", 1)
    stop, seen, failures = threading.Event(), [], []

    def read() -> None:
        while not stop.is_set():
            try:
                snapshot = open_index(str(index))
                keyword_search(snapshot, ["river"], 5)
                ids = sorted(snapshot.catalogue.ids().tolist())
                assert ids == sorted(snapshot.chunks.table.to_arrow()["chunk_id"].to_pylist())
                seen.append(len(ids))
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                failures.append(repr(exc))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for number in range(4, 12):
            write_note(index.parent / "notes", number, f"The river {number}.")
            if number % 3 == 0:
                os.remove(index.parent / "notes" / f"note-{number - 2}.md")
            Index(str(index)).sync(QUIET)
    finally:
        stop.set()
        reader.join()
    assert not failures, failures[:3]
    assert len(seen) > 3


def test_a_build_served_from_its_segments_answers_keywords_without_lancedb(index: Path):
    """LanceDB's import is much of a server's start: a keyword search and a chunk read need none of it."""
    script = (
        "import sys\n"
        "from arag_mcp.indexer.index.snapshot import open_index\n"
        "from arag_mcp.indexer.index.keywords.search import keyword_search\n"
        f"snapshot = open_index({str(index)!r})\n"
        "hits = keyword_search(snapshot, ['Marie Curie', 'river'], 5).hits\n"
        "assert hits and hits[0].chunk.text, hits\n"
        "print('lancedb' in sys.modules)\n"
        "snapshot.sentences\n"
        "print('lancedb' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"], result.stderr
