"""Interrupted and concurrent builds in real processes: SIGKILL mid-build, the lock, a clock a week off."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import lancedb
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.embedding.settings import DEFAULT_MODEL
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.index.schema import SENTENCES
from arag_mcp.indexer.index.snapshot import list_documents, open_index
from arag_mcp.indexer.indexes import Index

from ..conftest import run_cli
from ..test_build import _write_corpus
from ..test_index_management import _titles, _write
from ..test_write_batches import _assert_whole, _corpus, _options

QUIET = BuildOptions(progress=False)
"""The packaged model, as a user's builds have it: these builds are killed mid-way, watched, or
extended by `arag-index` processes that take the index's model."""
pytestmark = pytest.mark.slow


def kill_build_when(arguments: Sequence[str], ready: Callable[[], bool], timeout: float) -> None:
    """Run `arag-index ARGUMENTS` and kill it (SIGKILL) as soon as `ready()` holds: an interrupted build."""
    process = subprocess.Popen([sys.executable, "-m", "arag_mcp.indexer", *arguments], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert process.poll() is None, "the build finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()


def test_a_killed_build_keeps_its_committed_steps_and_the_next_embeds_only_the_rest(tmp_path: Path):
    corpus = tmp_path / "docs"
    for i in range(600):
        _write(corpus / f"doc-{i:03}.txt", f"Document {i} has a sentence. And another one about {i}.")
    index = tmp_path / "idx"
    kill_build_when(
        ["build", str(corpus), "--index", str(index), "--write-batch", "16", "--commit-every", "64", "--quiet"],
        lambda: bool((read_manifest(str(index)) or {}).get("counts", {}).get("sentences")),
        timeout=180,
    )

    kept = open_index(str(index))
    committed = kept.manifest.counts.sentences
    assert 0 < committed < 1200
    assert kept.sentences.table.count_rows() == committed == 2 * kept.manifest.counts.documents
    assert len(list_documents(str(index))) == kept.manifest.counts.documents

    summary = Index(str(index)).add([corpus], QUIET)
    assert summary.embedded_sentences == 1200 - committed
    assert (summary.documents, summary.sentences) == (600, 1200)
    assert open_index(str(index)).sentences.table.to_pandas()["chunk_id"].nunique() == 600


def test_the_lock_works_without_fcntl(tmp_path: Path):
    """Where filelock has no fcntl (as on Windows), a command waits for the lock another holds and
    runs once it is released."""
    _write(tmp_path / "a.md", "# A\n\nText.")
    script = textwrap.dedent(
        f"""
        import os, sys, threading
        sys.modules["fcntl"] = None  # as on Windows: importing it fails
        import filelock
        from arag_mcp.indexer.cli import main
        from arag_mcp.indexer.index.stores import LOCK_FILE
        assert not filelock.has_fcntl
        index = {str(tmp_path / "idx")!r}
        os.makedirs(index)
        taken = threading.Event()

        def hold() -> None:  # another command, for two seconds
            with filelock.FileLock(os.path.join(index, LOCK_FILE)):
                taken.set()
                threading.Event().wait(2.0)

        threading.Thread(target=hold).start()
        taken.wait()
        assert main(["add", {str(tmp_path / "a.md")!r}, "--index", index, "--quiet"]) == 0
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "waiting for it to finish" in result.stderr
    assert "added 1" in result.stderr


@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is not installed")
def test_a_build_interrupted_before_its_commit_leaves_an_index_older_than_a_week_usable(tmp_path: Path, monkeypatch):
    corpus = tmp_path / "docs"
    _write(corpus / "old.md", "# Old\n\nAn old document.")
    index = tmp_path / "idx"
    old = subprocess.run(
        [
            "faketime",
            "-f",
            "-8d",
            sys.executable,
            "-m",
            "arag_mcp.indexer",
            "build",
            str(corpus),
            "--index",
            str(index),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ARAG_INDEX_QUIET": "1"},
    )
    assert old.returncode == 0, old.stderr
    before = open_index(str(index)).version

    _write(corpus / "new.md", "# New\n\nA new document.")
    import arag_mcp.indexer.index.writer as store

    def killed(manifest: object) -> None:
        raise KeyboardInterrupt  # the process dies after its table writes, before the commit

    monkeypatch.setattr(store, "write_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        Index(str(index)).add([corpus], QUIET)
    monkeypatch.undo()

    info = run_cli("arag_mcp.indexer", "info", "--index", str(index))
    assert info.returncode == 0, info.stderr
    assert open_index(str(index)).version == before
    assert Index(str(index)).add([corpus], QUIET).added == 1
    assert _titles(index) == ["New", "Old"]


@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is not installed")
def test_a_build_on_a_clock_behind_the_index_completes(tmp_path: Path):
    corpus = tmp_path / "docs"
    _write(corpus / "now.md", "# Now\n\nWritten now.")
    index = tmp_path / "idx"
    Index(str(index)).add([corpus], QUIET)
    _write(corpus / "later.md", "# Later\n\nWritten by a machine whose clock is a week behind.")
    command = [sys.executable, "-m", "arag_mcp.indexer", "build", str(corpus), "--index", str(index), "--quiet"]
    behind = subprocess.run(["faketime", "-f", "-8d", *command], capture_output=True, text=True, timeout=300)
    assert behind.returncode == 0, behind.stderr
    assert _titles(index) == ["Later", "Now"]


def test_killed_build_leaves_previous_index_and_next_run_completes(tmp_path: Path):
    corpus = tmp_path / "docs"
    _write_corpus(corpus, {"first.txt": "The first document. It is small."})
    index = tmp_path / "idx"
    Index(str(index)).add([corpus], QUIET)
    before = open_index(str(index))
    committed = before.version

    _write_corpus(
        corpus, {f"more-{i:03}.txt": f"Document {i} has a sentence. And another one about {i}." for i in range(300)}
    )
    kill_build_when(
        ["build", str(corpus), "--index", str(index), "--write-batch", "16", "--quiet"],
        lambda: lancedb.connect(str(index)).open_table(SENTENCES).version > committed[1] + 1,
        timeout=120,
    )

    after_kill = open_index(str(index))
    assert after_kill.version == committed
    assert after_kill.chunks.table.count_rows() == 1 and after_kill.sentences.table.count_rows() == 2
    assert read_manifest(str(index))["counts"]["documents"] == 1

    summary = Index(str(index)).add([corpus], QUIET)
    assert summary.documents == 301 and summary.unchanged == 1
    final = open_index(str(index))
    assert final.chunks.table.count_rows() == 301
    assert final.sentences.table.count_rows() == 2 + 600
    assert final.sentences.table.to_pandas()["chunk_id"].nunique() == 301


def test_a_build_killed_inside_a_long_document_keeps_the_last_commit_and_the_next_is_whole(tmp_path: Path):
    written = _corpus(tmp_path / "written", 7)
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (written / "tiny.txt").rename(corpus / "tiny.txt")
    index = tmp_path / "idx"
    Index(str(index)).add([corpus], _options(7, DEFAULT_MODEL))
    for path in written.iterdir():
        path.rename(corpus / path.name)
    committed = open_index(str(index)).version
    kill_build_when(
        ["build", str(corpus), "--index", str(index), "--write-batch", "7", "--commit-every", "100000", "--quiet"],
        lambda: lancedb.connect(str(index)).open_table(SENTENCES).version > committed[1] + 2,
        timeout=120,
    )
    assert open_index(str(index)).version == committed
    _assert_whole(index, 1)

    summary = Index(str(index)).add([corpus], _options(7, DEFAULT_MODEL))
    assert (summary.added, summary.unchanged) == (3, 1)
    _assert_whole(index, 4)


REPORTS = 600
"""Reports of 60 sentences: 36,000 sentences, which no machine of this kind embeds within 45 s."""


def test_a_build_killed_45_s_in_with_commit_seconds_15_keeps_its_timed_commits(tmp_path: Path):
    """Commits land about every --commit-seconds of work, the first included, however slow the
    model: a build killed 45 s in keeps documents, and the next embeds only the rest."""
    corpus = tmp_path / "docs"
    for i in range(REPORTS):
        sentences = (f"Report {i} notes that harbour {i} shipped {j} crates of tin in week {j}." for j in range(60))
        _write(corpus / f"report-{i:03}.txt", " ".join(sentences))
    index = tmp_path / "idx"
    build = ["build", str(corpus), "--index", str(index), "--commit-seconds", "15"]
    process = subprocess.Popen([sys.executable, "-m", "arag_mcp.indexer", *build], stderr=subprocess.DEVNULL)
    started, commits, committed = time.monotonic(), [], 0
    try:
        while time.monotonic() - started < 45:
            assert process.poll() is None, "the build finished before it could be killed"
            documents = ((read_manifest(str(index)) or {}).get("counts") or {}).get("documents", 0)
            if documents != committed:
                commits.append(round(time.monotonic() - started, 1))
                committed = documents
            time.sleep(0.2)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()

    assert len(commits) >= 2, commits
    assert 45 - commits[-1] < 15 + 10, commits  # the last commit came within a period (and a batch) of the kill
    kept = open_index(str(index))
    assert 0 < kept.manifest.counts.documents < REPORTS
    assert len(list_documents(str(index))) == kept.manifest.counts.documents
    summary = Index(str(index)).add([corpus], QUIET)
    assert summary.embedded_sentences == 60 * (REPORTS - kept.manifest.counts.documents)


def test_a_document_longer_than_commit_seconds_is_committed_in_parts_and_the_next_build_completes_it(
    tmp_path: Path,
):
    """A document that alone outlasts --commit-seconds is committed in parts: a build killed inside
    it keeps the chunks committed (searchable, though the document is not yet listed), and the
    next build embeds only the rest of it, reusing the committed vectors."""
    corpus = tmp_path / "docs"
    sentences = [f"Chapter line {i} tells how harbour {i} shipped crates of tin." for i in range(3000)]
    _write(corpus / "book.txt", " ".join(sentences))
    index = tmp_path / "idx"

    def part_committed() -> bool:
        return 0 < ((read_manifest(str(index)) or {}).get("counts") or {}).get("sentences", 0) < 3000

    kill_build_when(
        ["build", str(corpus), "--index", str(index), "--write-batch", "16", "--commit-seconds", "1", "--quiet"],
        part_committed,
        timeout=180,
    )
    kept = open_index(str(index))
    committed = kept.manifest.counts.sentences
    assert 0 < committed < 3000
    assert list_documents(str(index)) == []  # listed once whole
    found = keyword_search(kept, ["harbour 0"], 5)
    assert [hit.chunk.title for hit in found.hits] == ["book"]

    summary = Index(str(index)).add([corpus], QUIET)
    assert summary.embedded_sentences == 3000 - committed
    _assert_whole(index, 1)
