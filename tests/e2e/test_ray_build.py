"""`arag-index --ray`: a build on a local Ray (2 CPUs) lands the index a local build lands, and a
killed worker or driver never leaves a half-built index in service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.index.schema import DOCUMENTS, SENTENCES
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.sources.files import Source, iter_documents

from .same_index import assert_same_index, committed_table, corpus_with_notes, write_notes

ray = pytest.importorskip("ray")
pytest.importorskip("lance")
ray_build = pytest.importorskip("arag_mcp.indexer.ray_build")

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


def test_ray_build_equals_local_build(tmp_path: Path, ray_address: str):
    corpus = corpus_with_notes(tmp_path / "docs", 70)
    local = Index(str(tmp_path / "local")).add([corpus], LOCAL)
    started = time.perf_counter()
    on_ray = Index(str(tmp_path / "ray")).add([corpus], ON_RAY)
    print(f"--ray build of {on_ray.sentences} sentences: {time.perf_counter() - started:.1f} s")
    assert (on_ray.added, on_ray.documents, on_ray.sentences) == (local.added, local.documents, local.sentences)
    assert on_ray.embedded_sentences == local.embedded_sentences
    assert_same_index(tmp_path / "ray", tmp_path / "local")


def test_a_corpus_in_one_file_is_read_in_shares_for_every_worker(tmp_path: Path):
    """The documents of one read task go to one actor as one block: a JSONL corpus is read in
    shares, each document once, so that every worker gets some (not one task for the whole file)."""
    corpus = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"id": f"d{n}", "title": f"Title {n}", "text": f"Text {n}."}) for n in range(1000)]
    corpus.write_text("\n".join(lines) + "\n")
    note = tmp_path / "note.txt"
    note.write_text("A note.")
    documents = {path: [d.doc_id for d in iter_documents([Source.at(path)], [])] for path in (corpus, note)}
    todo = {path: {doc_id: f"hash of {doc_id}" for doc_id in ids[5:] or ids} for path, ids in documents.items()}
    files = {str(path): (Source.at(path), todo[path]) for path in (corpus, note)}

    items = ray_build._read_items(files, [], ray_build._share(files, blocks=8))
    read = [row for item in items for row in ray_build._read_file(item)]

    assert len(items) >= 8
    assert max(len(json.loads(item["todo"])) for item in items) <= -(-1_000 // 8)
    assert sorted(row["digest"] for row in read) == sorted(h for wanted in todo.values() for h in wanted.values())


def test_incremental_ray_add_embeds_only_the_new_document(tmp_path: Path, ray_address: str):
    corpus = corpus_with_notes(tmp_path / "docs", 3)
    late = tmp_path / "late.md"
    (corpus / "pierre-curie.md").rename(late)
    Index(str(tmp_path / "ray")).add([corpus], ON_RAY)
    late.rename(corpus / "pierre-curie.md")
    (corpus / "note-000.txt").write_text("Note 0 was rewritten. It now says something else.")

    summary = Index(str(tmp_path / "ray")).add([corpus], ON_RAY)
    assert (summary.added, summary.updated, summary.removed) == (1, 1, 0)
    assert summary.unchanged == summary.documents - 2
    local = Index(str(tmp_path / "local")).add([corpus], LOCAL)
    changed = {"pierre-curie.md", "note-000.txt"}
    assert summary.embedded_sentences == sum(
        row["sentences"]
        for row in committed_table(tmp_path / "local", DOCUMENTS, ["doc_id"]).to_pylist()
        if Path(row["path"]).name in changed
    )
    assert local.documents == summary.documents
    assert_same_index(tmp_path / "ray", tmp_path / "local")


def test_a_build_that_starts_its_own_ray_shows_its_own_lines_not_rays(tmp_path: Path):
    """Ray's start-up notices, Ray Data's plans and warnings, and Lance's fork warnings (Ray forks
    and execs its processes at once) are kept off the build's stderr: its progress and summary stay."""
    corpus = corpus_with_notes(tmp_path / "docs", 3)
    build = subprocess.run(
        [sys.executable, "-m", "arag_mcp.indexer", "build", str(corpus), "--index", str(tmp_path / "idx"), "--ray"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    assert build.stderr.splitlines()[-1].startswith("added 9, "), build.stderr
    for notice in ("fork", "WARNING", "INFO", "Token authentication"):
        assert notice not in build.stderr, build.stderr


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
    corpus = corpus_with_notes(tmp_path / "docs", 0)
    index = tmp_path / "idx"
    Index(str(index)).add([corpus], LOCAL)
    previous = read_manifest(str(index))
    before = len(list((index / f"{SENTENCES}.lance" / "data").iterdir()))
    write_notes(corpus, 400)
    arguments = ["build", str(corpus), "--index", str(index), "--quiet", "--ray", ray_address, "--write-batch", "16"]

    if victim == "worker":  # Ray runs the killed worker's batch again; its fragments are never appended
        assert _kill_during_build(arguments, _writing_worker(index, before)) == 0
    else:
        assert _kill_during_build(arguments, _driver_of(index, before)) == -signal.SIGKILL
        assert read_manifest(str(index)) == previous
    summary = Index(str(index)).add([corpus], ON_RAY)
    assert summary.documents == 406
    Index(str(tmp_path / "local")).add([corpus], LOCAL)
    assert_same_index(index, tmp_path / "local")
