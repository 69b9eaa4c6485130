"""Which files a command reads: metadata first, the content hash where it changed; renames keep
their vectors; skips already reported are summed up; timed commits.

Real files, real LanceDB, the model of hashed words.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from arag_mcp.indexer.index.file_states import read_file_states
from arag_mcp.indexer.index.manifest import Manifest, check_manifest, read_manifest, write_manifest
from arag_mcp.indexer.index.snapshot import list_documents, open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.sources.formats import READERS_VERSION

from .conftest import HASHED_MODEL, run_cli
from .test_index_management import QUIET, _titles, _write


def _corpus(folder: Path) -> dict[str, Path]:
    return {
        "a": _write(folder / "a.md", "# Alpha\n\nAlpha is the first letter. It opens the alphabet."),
        "b": _write(folder / "b.md", "# Beta\n\nBeta is the second letter."),
        "c": _write(folder / "sub" / "c.txt", "Gamma is the third letter."),
    }


def test_a_file_whose_size_and_time_are_unchanged_is_not_read_again(tmp_path: Path):
    files = _corpus(tmp_path / "docs")
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    before = os.stat(files["b"])
    files["b"].write_text("# Betb\n\nBeta is the second letter.")  # same size
    os.utime(files["b"], ns=(before.st_atime_ns, before.st_mtime_ns))

    unchanged = Index(str(index)).sync(QUIET)
    assert (unchanged.added, unchanged.updated, unchanged.removed, unchanged.embedded_sentences) == (0, 0, 0, 0)
    assert _titles(index) == ["Alpha", "Beta", "c"]

    os.utime(files["b"])  # its time changed: its content hash is compared, and differs
    changed = Index(str(index)).sync(QUIET)
    assert (changed.updated, changed.embedded_sentences) == (1, 2)  # its heading and its sentence
    assert _titles(index) == ["Alpha", "Betb", "c"]


def test_a_touched_file_is_hashed_not_embedded_and_recorded_anew(tmp_path: Path):
    files = _corpus(tmp_path / "docs")
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    version = open_index(str(index)).version
    os.utime(files["a"], ns=(1, 1_000_000_000))

    touched = Index(str(index)).sync(QUIET)
    assert (touched.updated, touched.embedded_sentences) == (0, 0)
    assert open_index(str(index)).version == version  # nothing committed
    recorded = read_file_states(str(index), read_manifest(str(index))["tables"])
    assert recorded.states[files["a"].resolve().as_posix()].mtime_ns == 1_000_000_000


def test_sync_drops_deleted_files_and_adds_new_ones_reading_only_those(tmp_path: Path):
    files = _corpus(tmp_path / "docs")
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    files["c"].unlink()
    _write(tmp_path / "docs" / "d.md", "# Delta\n\nDelta is the fourth letter.")

    summary = Index(str(index)).sync(QUIET)
    assert (summary.added, summary.updated, summary.removed, summary.unchanged) == (1, 0, 1, 2)
    assert summary.embedded_sentences == 2  # Delta: its heading and its sentence
    assert _titles(index) == ["Alpha", "Beta", "Delta"]


def test_a_renamed_file_keeps_its_vectors(tmp_path: Path):
    files = _corpus(tmp_path / "docs")
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    old = open_index(str(index)).sentences.table.to_pandas()
    moved = files["a"].rename(tmp_path / "docs" / "sub" / "first.md")

    summary = Index(str(index)).sync(QUIET)
    assert (summary.added, summary.updated, summary.removed, summary.embedded_sentences) == (0, 1, 0, 0)
    listed = {document["title"]: document for document in list_documents(str(index))}
    assert listed["Alpha"]["source"] == "docs/sub/first.md"
    assert listed["Alpha"]["doc_id"] == moved.resolve().as_posix()
    snapshot = open_index(str(index))
    new = snapshot.sentences.table.to_pandas()
    assert len(new) == len(old)
    kept = dict(zip(old["text"], old["vector"].map(list)))
    assert all(kept[text] == list(vector) for text, vector in zip(new["text"], new["vector"]))
    chunks = snapshot.chunks.table.to_pandas()
    assert chunks[chunks["title"] == "Alpha"]["source"].tolist() == ["docs/sub/first.md"]
    assert Index(str(index)).sync(QUIET).embedded_sentences == 0


def test_a_renamed_file_whose_title_is_its_name_is_embedded_again(tmp_path: Path):
    files = _corpus(tmp_path / "docs")
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    files["c"].rename(files["c"].with_name("gamma.txt"))

    summary = Index(str(index)).sync(QUIET)
    assert (summary.added, summary.removed, summary.embedded_sentences) == (1, 1, 1)
    assert _titles(index) == ["Alpha", "Beta", "gamma"]


def test_sync_paths_reads_only_the_paths_given(tmp_path: Path):
    files = _corpus(tmp_path / "docs")
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    files["a"].write_text("# Alpha\n\nAlpha changed.")
    files["b"].write_text("# Beta\n\nBeta changed too.")

    summary = Index(str(index)).sync_paths([files["a"], tmp_path / "elsewhere.md"], QUIET)
    # the changed sentence, and the heading beside it: a short sentence is embedded with its neighbours
    assert (summary.updated, summary.embedded_sentences) == (1, 2)
    files["c"].unlink()
    gone = Index(str(index)).sync_paths([files["c"]], QUIET)
    assert (gone.removed, gone.updated) == (1, 0)
    assert Index(str(index)).sync(QUIET).updated == 1  # b, which no path named


def test_sync_paths_reads_relative_paths_from_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    files = _corpus(tmp_path / "docs")
    index = Index(tmp_path / "idx")
    index.add([tmp_path / "docs"], QUIET)
    files["a"].write_text("# Alpha\n\nAlpha changed.")
    files["c"].unlink()
    monkeypatch.chdir(tmp_path / "docs")
    summary = index.sync_paths([Path("a.md"), Path("sub/c.txt")], QUIET)
    assert (summary.updated, summary.removed) == (1, 1)


def test_files_skipped_before_and_unchanged_are_one_line(tmp_path: Path):
    _corpus(tmp_path / "docs")
    _write(tmp_path / "docs" / "bad.json", "{not json")
    _write(tmp_path / "docs" / "empty.md", "")
    index = tmp_path / "idx"
    first = run_cli(
        "arag_mcp.indexer", "build", str(tmp_path / "docs"), "--index", str(index), "--model", HASHED_MODEL, "--quiet"
    )
    assert first.returncode == 0, first.stderr
    assert "skipped docs/bad.json: line 1: invalid JSON" in first.stderr
    assert "skipped docs/empty.md: empty" in first.stderr

    again = run_cli("arag_mcp.indexer", "sync", "--index", str(index), "--quiet")
    assert again.returncode == 0, again.stderr
    assert "skipped docs/" not in again.stderr
    assert "2 file(s) or record(s) in 2 unchanged file(s) are still skipped" in again.stderr
    strict = run_cli("arag_mcp.indexer", "sync", "--index", str(index), "--quiet", "--strict")
    assert strict.returncode == 1
    assert "2 skipped with --strict" in strict.stderr


def test_a_build_commits_on_time_as_well_as_by_sentences(tmp_path: Path):
    for i in range(12):
        _write(tmp_path / "docs" / f"doc-{i:02}.txt", f"Document {i} says one thing. It says another about {i}.")
    index = tmp_path / "idx"
    seen_versions = []

    import arag_mcp.indexer.index.writer as writer

    original = writer.write_manifest

    def recording(manifest: Manifest) -> None:  # the real write; its versions are noted
        seen_versions.append(manifest.counts.documents)
        original(manifest)

    writer.write_manifest = recording
    try:
        Index(str(index)).add([tmp_path / "docs"], replace(QUIET, commit_seconds=0))
    finally:
        writer.write_manifest = original
    assert seen_versions[0] == 1  # the first commit came after the first document
    assert seen_versions[-1] == 12 and len(seen_versions) >= 12
    assert read_manifest(str(index))["counts"]["sentences"] == 24


def test_sync_paths_leaves_out_what_a_folder_read_leaves_out(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha.")
    index = docs / "idx"  # the index inside its own source
    Index(str(index)).add([docs], replace(QUIET, exclude=("drafts/",)))
    left_out = [
        _write(docs / ".hidden" / "h.md", "# Hidden\n\nHidden."),
        _write(docs / "drafts" / "d.md", "# Draft\n\nDraft."),
        _write(docs / "node_modules" / "pkg" / "n.md", "# Module\n\nModule."),
        _write(index / "stray.md", "# Stray\n\nStray."),
    ]
    kept = _write(docs / "b.md", "# Beta\n\nBeta.")

    summary = Index(str(index)).sync_paths([*left_out, kept], QUIET)
    assert (summary.added, summary.skipped) == (1, [])
    assert _titles(index) == ["Alpha", "Beta"]


def test_watching_a_missing_index_without_sources_is_one_line_and_creates_nothing(tmp_path: Path):
    missing = tmp_path / "nowhere"
    result = run_cli("arag_mcp.indexer", "watch", "--index", str(missing))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"arag-index: error: no index at {missing}: the folder does not exist; build one with "
        f"`arag-index build SOURCE --index {missing}` or fix --index"
    ]
    assert not missing.exists()


def test_files_read_by_other_readers_are_read_again_at_a_full_sync_keeping_their_vectors(tmp_path: Path):
    files = _corpus(tmp_path / "docs")
    index = str(tmp_path / "idx")
    Index(index).add([tmp_path / "docs"], QUIET)
    manifest = read_manifest(index)
    assert manifest["readers"] == READERS_VERSION
    before = os.stat(files["b"])
    files["b"].write_text("# Beta\n\nBeta is the second lettez.")  # same size and time: not read again unless asked
    os.utime(files["b"], ns=(before.st_atime_ns, before.st_mtime_ns))
    write_manifest(replace(check_manifest(index), readers=READERS_VERSION - 1))  # as an older version recorded it

    added = Index(index).add([tmp_path / "docs" / "sub"], QUIET)  # an add reads its path alone
    assert read_manifest(index)["readers"] == READERS_VERSION - 1 and added.updated == 0

    synced = Index(index).sync(QUIET)
    assert (synced.updated, synced.unchanged, synced.embedded_sentences) == (1, 2, 2)  # it and its short heading
    assert read_manifest(index)["readers"] == READERS_VERSION
    again = Index(index).sync(QUIET)
    assert (again.updated, again.embedded_sentences) == (0, 0)
