"""`arag-index --ray`: a build on a local Ray (2 CPUs) lands the index a local build lands, and a
killed worker or driver never leaves a half-built index in service."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from arag_mcp.indexer.build import BuildOptions, build_index
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.index.schema import CHUNKS, DOCUMENTS, SENTENCES

from ..conftest import SAMPLE

ray = pytest.importorskip("ray")
pytest.importorskip("lance")

pytestmark = pytest.mark.slow

LOCAL = BuildOptions(progress=False)
ON_RAY = BuildOptions(progress=False, ray="local")


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A Ray of 2 CPUs for this module: builds in this process use it, CLI builds join it by address."""
    ray.init(num_cpus=2, object_store_memory=100 * 2**20, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _corpus(folder: Path, notes: int) -> Path:
    """The sample corpus and `notes` small text files: enough batches to kill a build between them."""
    shutil.copytree(SAMPLE, folder)
    _write_notes(folder, notes)
    return folder


def _write_notes(folder: Path, notes: int) -> None:
    for number in range(notes):
        (folder / f"note-{number:03}.txt").write_text(
            f"Note {number} is about element {number}. It was found in {1800 + number}. "
            f"Its discoverer wrote {number % 7} papers about it."
        )


def _table(index: Path, name: str, key: list[str]) -> pa.Table:
    """A table of the committed index, sorted by `key`."""
    version = read_manifest(str(index))["tables"][name]
    table = lancedb.connect(str(index)).open_table(name)
    table.checkout(version)
    return table.to_arrow().sort_by([(column, "ascending") for column in key])


def _words(chunks: pa.Table) -> list[list[tuple[str, int]]]:
    """Each chunk's words and counts, in word order (a build lists them in any order)."""
    return [sorted(zip(*pair)) for pair in zip(chunks["terms"].to_pylist(), chunks["term_counts"].to_pylist())]


def assert_same_index(built: Path, expected: Path) -> None:
    """Same chunks (ids, texts, words), documents and sentences, vectors equal within float tolerance."""
    chunks, want = _table(built, CHUNKS, ["chunk_id"]), _table(expected, CHUNKS, ["chunk_id"])
    assert chunks.drop_columns(["chunk_id"]).column_names == want.drop_columns(["chunk_id"]).column_names
    for column in ("chunk_id", "text", "doc_id", "part", "parts", "sentence_starts"):
        assert chunks[column].to_pylist() == want[column].to_pylist(), column
    assert _words(chunks) == _words(want)
    documents, want_documents = _table(built, DOCUMENTS, ["doc_id"]), _table(expected, DOCUMENTS, ["doc_id"])
    for column in ("doc_id", "doc_hash", "chunks", "sentences"):
        assert documents[column].to_pylist() == want_documents[column].to_pylist(), column
    sentences = _table(built, SENTENCES, ["chunk_id", "position"])
    want_sentences = _table(expected, SENTENCES, ["chunk_id", "position"])
    assert sentences["text"].to_pylist() == want_sentences["text"].to_pylist()
    np.testing.assert_allclose(
        np.stack(sentences["vector"].to_numpy(zero_copy_only=False)),
        np.stack(want_sentences["vector"].to_numpy(zero_copy_only=False)),
        atol=1e-5,
    )
    counts = read_manifest(str(built))["counts"]
    assert counts == read_manifest(str(expected))["counts"]


def test_ray_build_equals_local_build(tmp_path: Path, ray_address: str):
    corpus = _corpus(tmp_path / "docs", 70)
    local = build_index([corpus], str(tmp_path / "local"), LOCAL)
    started = time.perf_counter()
    on_ray = build_index([corpus], str(tmp_path / "ray"), ON_RAY)
    print(f"--ray build of {on_ray.sentences} sentences: {time.perf_counter() - started:.1f} s")
    assert (on_ray.added, on_ray.documents, on_ray.sentences) == (local.added, local.documents, local.sentences)
    assert on_ray.embedded_sentences == local.embedded_sentences
    assert_same_index(tmp_path / "ray", tmp_path / "local")


def test_incremental_ray_add_embeds_only_the_new_document(tmp_path: Path, ray_address: str):
    corpus = _corpus(tmp_path / "docs", 3)
    late = tmp_path / "late.md"
    (corpus / "pierre-curie.md").rename(late)
    build_index([corpus], str(tmp_path / "ray"), ON_RAY)
    late.rename(corpus / "pierre-curie.md")
    (corpus / "note-000.txt").write_text("Note 0 was rewritten. It now says something else.")

    summary = build_index([corpus], str(tmp_path / "ray"), ON_RAY)
    assert (summary.added, summary.updated, summary.removed) == (1, 1, 0)
    assert summary.unchanged == summary.documents - 2
    local = build_index([corpus], str(tmp_path / "local"), LOCAL)
    changed = {"pierre-curie.md", "note-000.txt"}
    assert summary.embedded_sentences == sum(
        row["sentences"]
        for row in _table(tmp_path / "local", DOCUMENTS, ["doc_id"]).to_pylist()
        if Path(row["path"]).name in changed
    )
    assert local.documents == summary.documents
    assert_same_index(tmp_path / "ray", tmp_path / "local")


def _kill_during_build(
    arguments: list[str], victim: Callable[[subprocess.Popen], int | None], timeout: float = 240
) -> int:
    """Run `arag-index ARGUMENTS` and SIGKILL the process `victim(build)` names once it names one;
    the build's exit status."""
    build = subprocess.Popen(
        [sys.executable, "-m", "arag_mcp.indexer", *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + timeout
        while (pid := victim(build)) is None:
            assert build.poll() is None, "the build finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
        return build.wait(timeout=timeout)
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()


def _written(index: Path, before: int) -> bool:
    """Whether the build's workers have written a fragment of the sentences table."""
    return len(list((index / f"{SENTENCES}.lance" / "data").iterdir())) > before


def _driver_of(index: Path, before: int) -> Callable[[subprocess.Popen], int | None]:
    """The build's own pid, once its workers have written a fragment."""
    return lambda build: build.pid if _written(index, before) else None


def _writing_worker(index: Path, before: int) -> Callable[[subprocess.Popen], int | None]:
    """The pid of a Ray worker chunking and embedding, once the build's workers have written a fragment."""

    def find(build: subprocess.Popen) -> int | None:
        if not _written(index, before):
            return None
        for entry in Path("/proc").iterdir():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if entry.name.isdigit() and b"_ChunkEmbedWrite" in command:
                return int(entry.name)
        return None

    return find


@pytest.mark.parametrize("victim", ["worker", "driver"])
def test_a_killed_build_leaves_the_previous_index_and_the_next_build_whole(
    tmp_path: Path, ray_address: str, victim: str
):
    corpus = _corpus(tmp_path / "docs", 0)
    index = tmp_path / "idx"
    build_index([corpus], str(index), LOCAL)
    previous = read_manifest(str(index))
    before = len(list((index / f"{SENTENCES}.lance" / "data").iterdir()))
    _write_notes(corpus, 400)
    arguments = ["build", str(corpus), "--index", str(index), "--quiet", "--ray", ray_address, "--write-batch", "16"]

    if victim == "worker":  # Ray runs the killed worker's batch again; its fragments are never appended
        assert _kill_during_build(arguments, _writing_worker(index, before)) == 0
    else:
        assert _kill_during_build(arguments, _driver_of(index, before)) == -signal.SIGKILL
        assert read_manifest(str(index)) == previous
    summary = build_index([corpus], str(index), ON_RAY)
    assert summary.documents == 406
    build_index([corpus], str(tmp_path / "local"), LOCAL)
    assert_same_index(index, tmp_path / "local")
