"""What an edit costs: the sentences of an edited document that are embedded as before keep their
vectors, a run of small commits leaves the tables a bounded number of fragments and copies, and the
manifest's tally of the collection, kept by each commit's changes, equals a count of the tables;
a commit records the source files it changed, not every file's state; a watcher's batch looks up
the documents of the files it reads instead of reading every stored document.

Real files, real LanceDB, the model of hashed words.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from arag_mcp.indexer.index import compaction, file_states, stored_documents, writer
from arag_mcp.indexer.index.compaction import COMPACT_FRAGMENTS
from arag_mcp.indexer.index.file_states import FILES_FILE, LOG_FILE, RecordedFiles, read_file_states, write_file_states
from arag_mcp.indexer.index.keywords.segment_writer import MERGE_FACTOR
from arag_mcp.indexer.index.manifest import check_manifest, read_manifest
from arag_mcp.indexer.index.schema import CHUNKS, SENTENCES, TABLES
from arag_mcp.indexer.index.snapshot import list_documents
from arag_mcp.indexer.index.tally import TALLIED_COLUMNS, CollectionTally
from arag_mcp.indexer.indexes import Index

from .test_index_management import QUIET, _write

WORDS = (
    "river harbour lantern orchard granite meadow copper falcon willow ember quarry saddle thistle "
    "beacon marsh cedar tannery ferry glacier bellows furnace vineyard kiln cobble heron spindle"
).split()


def _story(sentences: int, seed: int = 7) -> str:
    """A Markdown document of `sentences` sentences under a heading every 60, written as prose is:
    each section returns to a few words of its own, among words that come once or twice."""
    rng = random.Random(seed)
    rare = [f"{rng.choice(WORDS)[:3]}{rng.choice(WORDS)[-4:]}{number}" for number in range(2_000)]
    lines = ["# The Valley Chronicle", ""]
    for number in range(sentences):
        if number % 60 == 0:
            topic = rng.sample(WORDS, 4)
            lines += ["", f"## Season {number // 60 + 1}", ""]
        lines.append(
            f"In year {1800 + number} the {rng.choice(topic)} near {rng.choice(rare)} was traded for "
            f"{rng.choice(rare)} and a {rng.choice(topic)}."
        )
    return "\n".join(lines) + "\n"


def _vectors(index: Path) -> dict[tuple[str, int], np.ndarray]:
    table = lancedb.connect(str(index)).open_table(SENTENCES)
    table.checkout(read_manifest(str(index))["tables"][SENTENCES])
    rows = table.search().select(["chunk_id", "position", "vector"]).limit(None).to_arrow().to_pylist()
    return {(row["chunk_id"], row["position"]): np.asarray(row["vector"]) for row in rows}


def test_appending_a_sentence_embeds_it_alone_and_keeps_the_vectors_a_fresh_build_makes(tmp_path: Path):
    story = _write(tmp_path / "docs" / "story.md", _story(300))
    index = tmp_path / "idx"
    assert Index(str(index)).add([tmp_path / "docs"], QUIET).embedded_sentences >= 300

    story.write_text(story.read_text() + "The lighthouse keeper counted seventeen gulls that morning.\n")
    summary = Index(str(index)).sync(QUIET)
    assert summary.updated == 1
    assert 1 <= summary.embedded_sentences <= 5, summary.describe()

    fresh = tmp_path / "fresh"
    Index(str(fresh)).add([tmp_path / "docs"], QUIET)
    kept, made = _vectors(index), _vectors(fresh)
    assert kept.keys() == made.keys()
    worst = max(float(np.abs(kept[place] - made[place]).max()) for place in made)
    assert worst < 1e-5, "a kept vector differs from the one a fresh build makes"


def test_a_changed_heading_embeds_the_sentences_under_it_again(tmp_path: Path):
    story = _write(tmp_path / "docs" / "story.md", _story(120))
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)

    story.write_text(story.read_text().replace("## Season 2", "## The Second Season"))
    summary = Index(str(index)).sync(QUIET)
    assert summary.embedded_sentences >= 60, "a sentence is embedded with the headings above it"


@pytest.mark.parametrize("edits", [COMPACT_FRAGMENTS + 4])
def test_small_commits_leave_a_bounded_number_of_fragments_and_copies(tmp_path: Path, edits: int):
    notes = [
        _write(tmp_path / "docs" / f"note-{n}.md", f"# Note {n}\n\nNote {n} is about {WORDS[n]}.") for n in range(8)
    ]
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    chunks = lancedb.connect(str(index)).open_table(CHUNKS)
    most_fragments = 0
    for edit in range(edits):
        notes[edit % len(notes)].write_text(f"# Note {edit}\n\nEdit {edit} mentions the {WORDS[edit % len(WORDS)]}.")
        assert Index(str(index)).sync(QUIET).updated == 1
        chunks.checkout_latest()
        most_fragments = max(most_fragments, chunks.stats()["fragment_stats"]["num_fragments"])
    assert most_fragments <= COMPACT_FRAGMENTS, "the chunks table was not compacted once due"
    segments = check_manifest(str(index)).segments
    assert len(segments) < MERGE_FACTOR, "the keyword segments were not merged once due"
    assert sorted(path.name for path in (index / "keywords").iterdir()) == sorted(entry.name for entry in segments)


def test_compaction_copies_the_small_fragments_and_leaves_a_large_one(tmp_path: Path, monkeypatch):
    """A fragment at the target size is not rewritten to drop a few rows or to take in new ones: a
    compaction copies the small fragments of the last commits, not the table (every table: those
    without a scalar index too, where Lance would merge any fragments under the target)."""
    monkeypatch.setattr(compaction, "FRAGMENT_BYTES", 1)  # the target: MIN_FRAGMENT_ROWS rows
    monkeypatch.setattr(compaction, "MIN_FRAGMENT_ROWS", 8)
    notes = [
        _write(tmp_path / "docs" / f"note-{n}.md", f"# Note {n}\n\nNote {n} is about {WORDS[n % len(WORDS)]}.")
        for n in range(40)
    ]
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    db = lancedb.connect(str(index))

    def data_files(name: str) -> dict[str, int]:
        dataset = db.open_table(name).to_lance()
        return {
            Path(file.path).name: part.count_rows() for part in dataset.get_fragments() for file in part.data_files()
        }

    large = {name: {file for file, rows in data_files(name).items() if rows >= 8} for name in TABLES}
    assert all(large.values()), large
    notes[0].write_text("# Note 0\n\nNote 0 is edited.")  # a row deleted from the large fragments
    assert Index(str(index)).sync(QUIET).updated == 1
    for edit in range(COMPACT_FRAGMENTS + 4):
        _write(tmp_path / "docs" / f"new-{edit}.md", f"# New {edit}\n\nIt mentions the {WORDS[edit % len(WORDS)]}.")
        assert Index(str(index)).sync(QUIET).added == 1
    for name in TABLES:
        after = data_files(name)
        assert large[name] <= set(after), f"a fragment of {name} at the target size was rewritten"
        assert sum(rows < 8 for rows in after.values()) < COMPACT_FRAGMENTS, name
    assert db.open_table(CHUNKS).count_rows() == 40 + COMPACT_FRAGMENTS + 4


def test_new_rows_join_each_index_as_deltas_merged_apart_from_its_first_part(tmp_path: Path, monkeypatch):
    """A compaction adds the new rows to an index as a delta, and merges the deltas once there are
    INDEX_DELTAS: the index's first part is never rewritten, and lookups through it stay exact."""
    monkeypatch.setattr(compaction, "COMPACT_FRAGMENTS", 2)
    monkeypatch.setattr(compaction, "INDEX_DELTAS", 2)
    _write(tmp_path / "docs" / "first.md", "# First\n\nThe first note.")
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    chunks = lancedb.connect(str(index)).open_table(CHUNKS)

    def parts() -> list[tuple[str, str]]:
        chunks.checkout_latest()
        indexes = chunks.to_lance().describe_indices()
        return [(index.name, segment.uuid) for index in indexes for segment in index.segments]

    first = dict(parts())
    most = 0
    for edit in range(12):
        _write(tmp_path / "docs" / f"new-{edit}.md", f"# New {edit}\n\nIt mentions the {WORDS[edit % len(WORDS)]}.")
        assert Index(str(index)).sync(QUIET).added == 1
        found = parts()
        assert all(uuid in {u for _, u in found} for uuid in first.values()), "an index's first part was rewritten"
        most = max(most, max(sum(name == wanted for name, _ in found) for wanted in first))
    assert most == compaction.INDEX_DELTAS + 1, "the deltas were never merged, or merged too late"
    for edit in range(12):
        doc_key = chunks.search().where(f"title = 'New {edit}'").select(["doc_key"]).to_arrow()["doc_key"][0].as_py()
        assert chunks.search().where(f"doc_key = '{doc_key}'").to_arrow().num_rows == 1


def _tally_of_tables(index: Path) -> dict:
    """What the manifest's tally should say, counted from the committed tables whole."""
    manifest = check_manifest(str(index))
    db = lancedb.connect(str(index))
    chunks, sentences = db.open_table(CHUNKS), db.open_table(SENTENCES)
    chunks.checkout(manifest.tables[CHUNKS])
    sentences.checkout(manifest.tables[SENTENCES])
    tally = CollectionTally()
    tally.change(chunks.search().select(list(TALLIED_COLUMNS)).limit(None).to_arrow(), sentences.count_rows())
    assert tally.chunks == chunks.count_rows() and tally.documents == chunks.count_rows("part = 0")
    recorded = tally.recorded(manifest).to_dict()
    return {key: recorded[key] for key in ("summary", "counts", "composition")}


def test_the_manifest_tally_follows_adds_edits_renames_and_removes(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "guide" / "a.md", "# Alpha\n\nAlpha opens the alphabet. It is first.")
    _write(docs / "guide" / "b.txt", "Beta comes second.")
    _write(docs / "notes" / "records.jsonl", '{"id": "r1", "text": "One record."}\n{"id": "r2", "text": "Two."}\n')
    index = tmp_path / "idx"
    Index(str(index)).add([docs], QUIET)

    def tallied() -> dict:
        return {key: read_manifest(str(index))[key] for key in ("summary", "counts", "composition")}

    assert tallied() == _tally_of_tables(index)
    assert tallied()["composition"] == {
        "file_types": {"md": 1, "txt": 1, "jsonl": 2},
        "folders": {"docs/guide": 2, "docs/notes": 2},
    }
    steps = [
        lambda: _write(docs / "guide" / "a.md", "# Alpha\n\nAlpha opens the alphabet. It is first. A third sentence."),
        lambda: (docs / "guide" / "b.txt").rename(docs / "notes" / "b.txt"),
        lambda: _write(docs / "notes" / "records.jsonl", '{"id": "r1", "text": "One record, changed."}\n'),
        lambda: (docs / "guide" / "a.md").unlink(),
    ]
    for step in steps:
        step()
        Index(str(index)).sync(QUIET)
        assert tallied() == _tally_of_tables(index)
    Index(str(index)).remove([str(docs / "notes" / "b.txt")])
    assert tallied() == _tally_of_tables(index)
    assert tallied()["counts"]["documents"] == 1 and tallied()["summary"].startswith("1 document (1 jsonl)")


def _recorded(index: Path) -> RecordedFiles:
    return read_file_states(str(index), read_manifest(str(index))["tables"])


def test_a_commit_records_the_files_it_changed_and_a_commit_that_never_landed_is_passed_over(tmp_path: Path):
    notes = [
        _write(tmp_path / "docs" / f"note-{n}.md", f"# Note {n}\n\nNote {n} is about {WORDS[n]}.") for n in range(6)
    ]
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    whole = (index / FILES_FILE).read_bytes()
    for edit in range(3):
        notes[edit].write_text(f"# Note {edit}\n\nEdited, {edit}.")
        Index(str(index)).sync(QUIET)
        entry = json.loads((index / LOG_FILE).read_text())["entries"][-1]
        assert list(entry["files"]) == [notes[edit].resolve().as_posix()] and entry["gone"] == []
    notes[5].unlink()
    Index(str(index)).sync(QUIET)
    assert json.loads((index / LOG_FILE).read_text())["entries"][-1]["gone"] == [notes[5].resolve().as_posix()]
    assert (index / FILES_FILE).read_bytes() == whole, "the whole record is not written while the log is small"

    recorded = _recorded(index)
    assert sorted(recorded.states) == sorted(note.resolve().as_posix() for note in notes[:5])
    assert all(recorded.states[note.resolve().as_posix()].same_metadata(*_metadata(note)) for note in notes[:5])
    never_landed = {name: version + 100 for name, version in recorded.tables.items()}
    write_file_states(str(index), never_landed, {}, since=recorded)
    assert _recorded(index).states == recorded.states
    notes[4].write_text("# Note 4\n\nEdited after a commit that never landed.")
    assert Index(str(index)).sync(QUIET).updated == 1
    assert Index(str(index)).sync(QUIET).embedded_sentences == 0
    assert sorted(_recorded(index).states) == sorted(recorded.states)


def test_a_full_log_is_folded_into_a_whole_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(file_states, "LOG_MIN_BYTES", 0)
    monkeypatch.setattr(file_states, "LOG_PER_RECORD", 1)
    notes = [
        _write(tmp_path / "docs" / f"note-{n}.md", f"# Note {n}\n\nNote {n} is about {WORDS[n]}.") for n in range(4)
    ]
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    wholes = 0
    for edit in range(4):
        notes[edit % 4].write_text(f"# Note {edit}\n\nEdited, {edit}.")
        Index(str(index)).sync(QUIET)
        whole = json.loads((index / FILES_FILE).read_text())
        wholes += whole["tables"] == read_manifest(str(index))["tables"]
        assert sorted(_recorded(index).states) == sorted(note.resolve().as_posix() for note in notes)
    assert wholes >= 1, "a log over its share was never folded into a whole record"


def _metadata(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def test_a_watcher_batch_looks_up_its_documents_rather_than_reading_every_one(tmp_path: Path, monkeypatch):
    docs = tmp_path / "docs"
    notes = [_write(docs / f"note-{n}.md", f"# Note {n}\n\nNote {n} is about {WORDS[n]}.") for n in range(5)]
    records = _write(docs / "records.jsonl", '{"id": "r1", "text": "One record."}\n{"id": "r2", "text": "Two."}\n')
    index = tmp_path / "idx"
    Index(str(index)).add([docs], QUIET)
    scans = []
    every = stored_documents.scanned_documents
    for module in (stored_documents, writer):
        monkeypatch.setattr(module, "scanned_documents", lambda *tables: scans.append(1) or every(*tables))

    notes[0].write_text("# Note 0\n\nNote 0 changed.")
    notes[1].unlink()
    batch = Index(str(index)).sync_paths([notes[0], notes[1]], QUIET)
    assert (batch.updated, batch.removed, batch.added) == (1, 1, 0)
    _write(docs / "more.jsonl", '{"id": "r2", "text": "Two, moved here."}\n{"id": "r3", "text": "Three."}\n')
    records.write_text('{"id": "r1", "text": "One record."}\n')
    moved = Index(str(index)).sync_paths([docs / "more.jsonl", records], QUIET)
    assert (moved.updated, moved.added, moved.removed) == (1, 1, 0), moved.describe()
    assert scans == [], "a batch read every stored document"
    assert sorted(row["doc_id"] for row in list_documents(str(index)) if row["doc_id"].startswith("r")) == [
        "r1",
        "r2",
        "r3",
    ]

    monkeypatch.setattr(stored_documents, "SCAN_AFTER_MISSES", 2)
    _write(docs / "many.jsonl", "".join(f'{{"id": "m{n}", "text": "Record {n}."}}\n' for n in range(6)))
    assert Index(str(index)).sync_paths([docs / "many.jsonl"], QUIET).added == 6
    assert scans == [1], "ids met one at a time are read at once past SCAN_AFTER_MISSES"
    assert Index(str(index)).sync(QUIET).embedded_sentences == 0


def test_a_documents_row_that_names_no_file_is_a_document_of_no_path():
    """Rows written by other tools may leave `path` null: a sync compares it as "" (it failed on None)."""
    chunk_rows = pa.table({"chunk_id": ["k-0"], "doc_id": ["record"], "part": [0], "parts": [1]})
    document_rows = pa.table(
        {"doc_id": ["record"], "doc_hash": ["h"], "path": pa.array([None], pa.string()), "chunks": [1]}
    )
    stored = stored_documents.documents_of(chunk_rows, document_rows)
    assert stored["record"].path == "" and not stored["record"].problem
