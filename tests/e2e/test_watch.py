"""`arag-index watch` in real processes on a real folder: edits, adds, deletes, renames, atomic
saves, bursts, bad files, the index inside the watched folder, two watchers, SIGKILL and SIGTERM;
and a first build killed after its first timed commit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import filelock
import numpy as np
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.index.snapshot import list_documents, open_index
from arag_mcp.indexer.index.stores import LOCK_FILE
from arag_mcp.indexer.indexes import Index
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from ..conftest import BUCKET, HASHED_MODEL
from ..test_index_management import _titles, _write
from ..test_write_batches import _assert_whole

QUIET = BuildOptions(progress=False)
"""The packaged model, as a user's builds have it: these builds are killed mid-way, watched, or
extended by `arag-index` processes that take the index's model."""

pytestmark = pytest.mark.slow


def wait_for(condition: Callable[[], bool], timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.1)


@contextmanager
def watcher(index: Path | str, *sources: Path, log: Path | None = None) -> Iterator[subprocess.Popen]:
    """`arag-index watch` running until the block ends (stopped with SIGTERM); its stderr goes to `log`."""
    log = log or Path(index).parent / "watch.log"
    with log.open("ab") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "arag_mcp.indexer", "watch", *map(str, sources), "--index", str(index)],
            stderr=stderr,
            env={**os.environ, "ARAG_INDEX_RECONCILE_EVERY": "3"},
        )
    try:
        wait_for(lambda: "watching " in log.read_text() or process.poll() is not None, 120, "the watch to start")
        assert process.poll() is None, log.read_text()
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(60)


def batch_running(index: Path) -> bool:
    """Whether a build holds the index's lock (a watcher's batch is being written)."""
    lock = filelock.FileLock(index / LOCK_FILE, timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        return True
    lock.release()
    return False


def _titles_are(index: Path, expected: list[str]) -> Callable[[], bool]:
    return lambda: _titles(index) == expected


def test_a_watched_folder_follows_edits_adds_deletes_renames_atomic_saves_and_bad_files(tmp_path: Path):
    docs = tmp_path / "docs"
    a = _write(docs / "a.md", "# Alpha\n\nAlpha is the first letter.")
    b = _write(docs / "b.md", "# Beta\n\nBeta is the second letter.")
    index = docs / ".." / "docs" / "idx"  # the index inside the watched folder
    log = tmp_path / "watch.log"
    with watcher(index, docs, log=log) as process:
        assert _titles(index) == ["Alpha", "Beta"]
        a.write_text("# Aleph\n\nAlpha, edited.")
        wait_for(_titles_are(index, ["Aleph", "Beta"]), what="the edit")
        _write(docs / "sub" / "c.md", "# Gamma\n\nGamma is new.")
        wait_for(_titles_are(index, ["Aleph", "Beta", "Gamma"]), what="the new file")
        b.unlink()
        wait_for(_titles_are(index, ["Aleph", "Gamma"]), what="the deletion")

        embedded_before = open_index(str(index)).sentences.table.to_pandas()
        (docs / "sub" / "c.md").rename(docs / "gamma.md")
        wait_for(lambda: any(d["source"] == "docs/gamma.md" for d in list_documents(str(index))), what="the rename")
        assert _titles(index) == ["Aleph", "Gamma"]
        moved = open_index(str(index)).sentences.table.to_pandas()
        assert sorted(map(list, moved["vector"])) == sorted(map(list, embedded_before["vector"]))

        temporary = docs / ".a.md.swp"  # an editor's atomic save: write a hidden file, rename it over
        temporary.write_text("# Alef\n\nAlpha, saved atomically.")
        os.replace(temporary, a)
        wait_for(_titles_are(index, ["Alef", "Gamma"]), what="the atomic save")

        a.unlink()  # git checkout: gone, then back a moment later
        time.sleep(0.5)
        a.write_text("# Alef\n\nAlpha, saved atomically.")
        _write(docs / "bad.json", "{not json")
        _write(docs / "d.md", "# Delta\n\nDelta comes after the bad file.")
        wait_for(_titles_are(index, ["Alef", "Delta", "Gamma"]), what="the file after the bad one")
        assert process.poll() is None
    text = log.read_text()
    assert text.count("skipped docs/bad.json: line 1: invalid JSON") == 1, text
    assert "-1 in " in text and "+1 ~0 -0 in " in text and "documents" in text
    assert "Traceback" not in text
    assert "idx" not in {d["source"].split("/")[1] for d in list_documents(str(index))}


def test_a_burst_of_500_files_lands_whole_in_few_batches(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "first.md", "# First\n\nThe first file.")
    index = tmp_path / "idx"
    log = tmp_path / "watch.log"
    with watcher(index, docs, log=log):
        for i in range(500):
            _write(docs / f"burst-{i // 50}" / f"doc-{i:03}.txt", f"Burst document {i}. It says {i}.")
        wait_for(lambda: (read_manifest(str(index)) or {})["counts"]["documents"] == 501, 300, "the burst")
    documents = list_documents(str(index))
    assert len(documents) == len({d["doc_id"] for d in documents}) == 501
    _assert_whole(index, 501)
    batches = [line for line in log.read_text().splitlines() if line.startswith("+")]
    assert 1 <= len(batches) <= 10, batches


def test_a_second_watcher_of_the_same_index_says_so_and_exits(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha.")
    index = tmp_path / "idx"
    with watcher(index, docs):
        second = subprocess.run(
            [sys.executable, "-m", "arag_mcp.indexer", "watch", "--index", str(index)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert second.returncode == 3
    assert second.stderr.strip().splitlines() == [
        f"arag-index: another arag-index watch keeps {index} current; this one is not needed"
    ]


def test_a_watcher_killed_mid_batch_leaves_its_last_commit_and_the_next_catches_up(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha.")
    index = tmp_path / "idx"
    with watcher(index, docs) as process:
        for i in range(300):
            _write(docs / f"doc-{i:03}.txt", f"Document {i} has a sentence. And another one about {i}.")
        wait_for(lambda: batch_running(index), 60, "a batch to start")
        process.send_signal(signal.SIGKILL)
        process.wait()
    kept = open_index(str(index))  # its last commit, whole
    _assert_whole(index, kept.manifest.counts.documents)
    with watcher(index):
        wait_for(lambda: read_manifest(str(index))["counts"]["documents"] == 301, 300, "the catch-up")
    assert len({d["doc_id"] for d in list_documents(str(index))}) == 301


def test_sigterm_finishes_the_batch_in_hand_and_exits_cleanly(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha.")
    index = tmp_path / "idx"
    log = tmp_path / "watch.log"
    with watcher(index, docs, log=log) as process:
        for i in range(40):
            _write(docs / f"doc-{i:02}.txt", f"Document {i}. About {i}.")
        wait_for(lambda: batch_running(index), 60, "a batch to start")
        process.send_signal(signal.SIGTERM)
        assert process.wait(120) == 0
    assert "stopped watching" in log.read_text()
    _assert_whole(index, read_manifest(str(index))["counts"]["documents"])
    assert read_manifest(str(index))["counts"]["documents"] > 1  # the batch in hand was committed


def test_a_watcher_embeds_with_the_model_its_index_names_even_one_without_files(tmp_path: Path):
    """An index of the model of hashed words carries no encoder folder: the watcher process makes its
    vectors from the name in the manifest, the same a build in this process makes."""
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha is the first letter.")
    index = tmp_path / "idx"
    Index(str(index)).add([docs], BuildOptions(model=HASHED_MODEL, progress=False))
    with watcher(index):
        _write(docs / "b.md", "# Beta\n\nBeta is the second letter.")
        wait_for(_titles_are(index, ["Alpha", "Beta"]), what="the new file")
    manifest = read_manifest(str(index))
    assert (manifest["model"], manifest["encoder"]) == (HASHED_MODEL, None)
    fresh = tmp_path / "fresh"
    Index(str(fresh)).add([docs], BuildOptions(model=HASHED_MODEL, progress=False))
    watched, built = (open_index(str(folder)).sentences.table.to_pandas() for folder in (index, fresh))
    vectors = {text: vector for text, vector in zip(built["text"], built["vector"])}
    assert sorted(watched["text"]) == sorted(vectors)
    assert all(np.array_equal(vector, vectors[text]) for text, vector in zip(watched["text"], watched["vector"]))


def test_a_first_build_killed_after_its_first_timed_commit_opens_and_the_next_embeds_only_the_rest(tmp_path: Path):
    docs = tmp_path / "docs"
    for i in range(600):
        _write(docs / f"doc-{i:03}.txt", f"Document {i} has a sentence. And another one about {i}.")
    index = tmp_path / "idx"
    process = subprocess.Popen(
        [sys.executable, "-m", "arag_mcp.indexer", "build", str(docs), "--index", str(index), "--quiet"]
        + ["--write-batch", "16", "--commit-seconds", "1"],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: read_manifest(str(index)) is not None or process.poll() is not None, 180, "a commit")
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    kept = open_index(str(index))
    committed = kept.manifest.counts.sentences
    assert 0 < committed < 1200
    summary = Index(str(index)).add([docs], QUIET)
    assert summary.embedded_sentences == 1200 - committed
    assert (summary.documents, summary.sentences) == (600, 1200)


@pytest.mark.anyio
async def test_a_server_with_watch_finds_a_word_written_after_it_started_and_a_second_server_follows(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha is the first letter.")
    index = tmp_path / "idx"
    Index(str(index)).add([docs], QUIET)
    first_log, second_log = (tmp_path / "first.log").open("w+"), (tmp_path / "second.log").open("w+")

    def server(errlog) -> Client:  # noqa: ANN001 - a text file
        arguments = ["-m", "arag_mcp.server", "--index", str(index), "--watch"]
        return Client(
            stdio_client(
                StdioServerParameters(command=sys.executable, args=arguments, env=dict(os.environ)), errlog=errlog
            )
        )

    async def search(client: Client, word: str) -> list:
        found = await client.call_tool("keyword_search", {"keywords": [word]})
        assert not found.is_error, found.content[0].text
        return found.structured_content["results"]

    async with server(first_log) as first:
        await anyio.sleep(0)
        deadline = time.monotonic() + 60
        while "watching" not in _watcher_state(await first.read_resource("arag://index")):
            assert time.monotonic() < deadline, _watcher_state(await first.read_resource("arag://index"))
            await anyio.sleep(0.2)
        async with server(second_log) as second:
            _write(docs / "b.md", "# Beta\n\nThe zanzibarite crystal glows.")
            deadline = time.monotonic() + 60
            while not await search(first, "zanzibarite"):
                assert time.monotonic() < deadline, first_log.name
                await anyio.sleep(0.2)
            while not await search(second, "zanzibarite"):  # it follows the first one's commits
                assert time.monotonic() < deadline
                await anyio.sleep(0.2)
            described = json.loads((await first.read_resource("arag://index")).contents[0].text)
            assert described["watcher"]["last_report"].startswith("+1 ~0 -0 in ")
            assert described["last_changed"] == read_manifest(str(index))["built_at"]
            while not _watcher_state(await second.read_resource("arag://index")).startswith("another process watches"):
                assert time.monotonic() < deadline
                await anyio.sleep(0.2)
    second_log.seek(0)
    told = [line for line in second_log.read().splitlines() if "another process watches" in line]
    assert len(told) == 1, told


def _watcher_state(resource) -> str:  # noqa: ANN001 - the SDK's result
    return json.loads(resource.contents[0].text)["watcher"]["state"]


def test_local_sources_into_an_s3_index_are_watched_the_same_way(tmp_path: Path, s3_endpoint: str):
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha.")
    index = f"s3://{BUCKET}/watched"
    log = tmp_path / "watch.log"
    with watcher(index, docs, log=log):  # type: ignore[arg-type]
        _write(docs / "b.md", "# Beta\n\nBeta.")
        wait_for(lambda: sorted(d["title"] for d in list_documents(index)) == ["Alpha", "Beta"], what="the new file")
        (docs / "a.md").unlink()
        wait_for(lambda: [d["title"] for d in list_documents(index)] == ["Beta"], what="the deletion")
    assert "Traceback" not in log.read_text()


def test_a_batch_waits_while_another_command_changes_the_index(tmp_path: Path):
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha.")
    index = tmp_path / "idx"
    log = tmp_path / "watch.log"
    with watcher(index, docs, log=log):
        with filelock.FileLock(index / LOCK_FILE, timeout=0):  # as `arag-index add` holds it
            _write(docs / "b.md", "# Beta\n\nBeta.")
            wait_for(lambda: "this batch waits for it" in log.read_text(), what="the batch to wait")
            time.sleep(6)  # past a retry
            assert _titles(index) == ["Alpha"]
        wait_for(_titles_are(index, ["Alpha", "Beta"]), what="the batch after the lock")
    assert log.read_text().count("this batch waits for it") == 1


def two_notes(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A folder of two notes, Alpha and Beta: the folder and each note."""
    docs = tmp_path / "docs"
    return (
        docs,
        _write(docs / "a.md", "# Alpha\n\nAlpha is the first letter."),
        _write(docs / "b.md", "# Beta\n\nBeta is the second letter."),
    )


def test_a_file_deleted_and_written_again_within_the_grace_stays_beside_another_change(tmp_path: Path):
    """A deletion waits out its grace even when its batch holds another change: the file written
    back (an editor's save, `git checkout`) never leaves the index and is not embedded again."""
    docs, a, b = two_notes(tmp_path)
    index, log = tmp_path / "idx", tmp_path / "watch.log"
    with watcher(index, docs, log=log):
        a.unlink()
        b.write_text("# Beta\n\nBeta, edited beside the deletion.")
        time.sleep(1.0)
        a.write_text("# Alpha\n\nAlpha is the first letter.")
        wait_for(lambda: "Beta, edited" in _texts(index), what="the edit beside the deletion")
        time.sleep(4)  # past the grace and another batch
        assert _titles(index) == ["Alpha", "Beta"]
    text = log.read_text()
    assert "~1 -0 in " in text and " -1 in " not in text, text
    assert "+1 ~0 -0" not in text, "the file written back was embedded again: " + text


def _texts(index: Path) -> str:
    snapshot = open_index(str(index))
    return " ".join(chunk.text for chunk in snapshot.chunks.at(np.arange(snapshot.chunk_count)).values())


def test_add_run_while_a_watcher_writes_a_batch_waits_and_its_file_is_searchable(tmp_path: Path):
    """`arag-index add` finds the index locked by a watcher's batch: it says so in one line, waits,
    then adds; the batch and the added file both land whole."""
    docs = tmp_path / "docs"
    _write(docs / "a.md", "# Alpha\n\nAlpha.")
    index = tmp_path / "idx"
    log = tmp_path / "watch.log"
    elsewhere = _write(tmp_path / "elsewhere" / "zephyr.md", "# Zephyr\n\nThe zephyrometer reads the west wind.")
    with watcher(index, docs, log=log):
        long_note = "\n".join(f"Sentence {i} of the long note speaks of harbour number {i}." for i in range(1500))
        _write(docs / "long.md", "# Long\n\n" + long_note)
        wait_for(lambda: batch_running(index), 30, "the watcher's batch to take the lock")
        added = subprocess.run(
            [sys.executable, "-m", "arag_mcp.indexer", "add", str(elsewhere), "--index", str(index)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert added.returncode == 0, added.stderr
        waited = [line for line in added.stderr.splitlines() if "waiting for it to finish" in line]
        assert len(waited) == 1, added.stderr
        wait_for(_titles_are(index, ["Alpha", "Long", "Zephyr"]), 120, "the batch and the added file")
    _assert_whole(index, 3)
    snapshot = open_index(str(index))
    found = keyword_search(snapshot, ["zephyrometer"], 5, "word")
    assert [hit.chunk.title for hit in found.hits] == ["Zephyr"]


def test_a_file_deleted_beside_an_atomic_save_waits_its_grace_and_a_rename_still_moves(tmp_path: Path):
    """An editor's atomic save reports an added file: a deletion in its batch is offered as a rename
    and, its content being another's, waits out its grace; written back within it, the file never
    leaves the index. A real rename in a batch still moves its document without embedding."""
    docs, a, b = two_notes(tmp_path)
    index, log = tmp_path / "idx", tmp_path / "watch.log"
    with watcher(index, docs, log=log):
        a.unlink()
        saved = docs / "b.md.tmp"
        saved.write_text("# Beta\n\nBeta, saved atomically beside the deletion.")
        saved.rename(b)
        wait_for(lambda: "saved atomically" in _texts(index), what="the atomic save beside the deletion")
        assert _titles(index) == ["Alpha", "Beta"]
        a.write_text("# Alpha\n\nAlpha is the first letter.")
        time.sleep(4)  # past the grace and another batch
        assert _titles(index) == ["Alpha", "Beta"]
        (docs / "b.md").rename(docs / "c.md")
        wait_for(
            lambda: [d["source"] for d in list_documents(str(index))] == ["docs/a.md", "docs/c.md"], what="the rename"
        )
    text = log.read_text()
    assert " -1 in " not in text and "+1 ~0 -0" not in text, text


WATCH_MERGING_BY_TWOS = """
import sys
from arag_mcp.indexer import watch
from arag_mcp.indexer.index.keywords import segment_writer
segment_writer.MERGE_FACTOR, segment_writer.SMALLEST_TIER = 2, 1
watch.IDLE_MERGE_SECONDS = 5.0
from arag_mcp.indexer.cli import main
sys.exit(main(sys.argv[1:]))
"""


WATCH_NEVER_IDLE = """
import sys
from arag_mcp.indexer import watch
from arag_mcp.indexer.index.keywords import segment_writer
segment_writer.MERGE_FACTOR, segment_writer.SMALLEST_TIER = 2, 1
watch.IDLE_MERGE_SECONDS, watch.MERGE_AT_LATEST_SECONDS = 3600.0, 4.0
from arag_mcp.indexer.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _watching_a_base_note(tmp_path: Path, script: str) -> tuple[Path, Path, Path, subprocess.Popen]:
    """A folder of one note, indexed, and a watcher started on it by `script` (its log beside them)."""
    notes, index, log = tmp_path / "notes", tmp_path / "idx", tmp_path / "watch.log"
    notes.mkdir()
    (notes / "base.md").write_text("# Base\n\nThe base note.\n")
    Index(index).add([notes], QUIET)
    with log.open("ab") as stderr:
        watching = subprocess.Popen([sys.executable, "-c", script, "watch", "--index", str(index)], stderr=stderr)
    wait_for(lambda: "watching " in log.read_text() or watching.poll() is not None, 120, "the watch to start")
    assert watching.poll() is None, log.read_text()
    return notes, index, log, watching


def test_where_changes_keep_coming_the_watcher_merges_between_batches(tmp_path: Path):
    notes, index, log, watching = _watching_a_base_note(tmp_path, WATCH_NEVER_IDLE)
    try:
        deadline = time.monotonic() + 90
        number = 0
        while "merged keyword segments" not in log.read_text():  # a save every second: never idle
            assert time.monotonic() < deadline, log.read_text()
            number += 1
            (notes / f"river-{number}.md").write_text(f"# River {number}\n\nRiver {number} floods.\n")
            time.sleep(1.0)
        assert len(read_manifest(str(index))["segments"]) < number + 1
    finally:
        watching.terminate()
        watching.wait(60)


def test_a_batch_commits_unmerged_and_the_watcher_merges_its_segments_once_idle(tmp_path: Path):
    notes, index, log, watching = _watching_a_base_note(tmp_path, WATCH_MERGING_BY_TWOS)
    try:
        for number in (1, 2):
            committed = read_manifest(str(index))["tables"]
            (notes / f"river-{number}.md").write_text(f"# River {number}\n\nRiver {number} floods.\n")
            wait_for(lambda: read_manifest(str(index))["tables"] != committed, 60, f"batch {number}")
        # the second batch left two one-chunk segments: a merge is due, and the batch did not wait for it
        assert [segment["chunks"] for segment in read_manifest(str(index))["segments"]] == [1, 1, 1]
        # the manifest names the merged segments a moment before the watcher logs the merge
        wait_for(lambda: "merged keyword segments" in log.read_text(), 60, "the merge once idle")
        assert len(read_manifest(str(index))["segments"]) < 3
        assert sorted(_titles(index)) == ["Base", "River 1", "River 2"]
        found = keyword_search(open_index(str(index)), ["River 2"], 5).hits
        assert [hit.chunk.title for hit in found][:1] == ["River 2"]
    finally:
        watching.terminate()
        watching.wait(60)
