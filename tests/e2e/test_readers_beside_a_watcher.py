"""`arag-index list` and `info`, run in a loop as processes of their own, beside a real watcher
process committing batch after batch, each batch compacting its tables and cleaning up the versions
older than a second (a reader's worst case: the grace that keeps a slow reader's versions is two
minutes): every read answers, going back to the manifest where a version it read is gone, and none
calls the index damaged."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.indexes import Index

from .test_watch import QUIET, wait_for

pytestmark = pytest.mark.slow
BATCHES = 12
WATCH_COMPACTING_EVERY_BATCH = """
import sys
from datetime import timedelta
from arag_mcp.indexer.index import compaction, writer
compaction.COMPACT_FRAGMENTS = 1
writer.READER_GRACE = timedelta(seconds=1)
from arag_mcp.indexer.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_list_and_info_in_a_loop_beside_a_watcher_committing_twelve_batches(tmp_path: Path):
    notes, index, log = tmp_path / "notes", tmp_path / "idx", tmp_path / "watch.log"
    notes.mkdir()
    for number in range(4):
        (notes / f"note-{number}.md").write_text(f"# Note {number}\n\nNote {number} is short.\n")
    Index(str(index)).add([notes], QUIET)
    with log.open("ab") as stderr:
        watching = subprocess.Popen(
            [sys.executable, "-c", WATCH_COMPACTING_EVERY_BATCH, "watch", str(notes), "--index", str(index)],
            stderr=stderr,
        )
    reads: list[tuple[str, int, str]] = []
    stop = threading.Event()

    def read_in_a_loop(command: str) -> None:
        while not stop.is_set():
            done = subprocess.run(
                [sys.executable, "-m", "arag_mcp.indexer", command, "--index", str(index)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            reads.append((command, done.returncode, done.stderr))

    readers = [threading.Thread(target=read_in_a_loop, args=(command,)) for command in ("list", "info")]

    def finished_reads() -> tuple[int, int]:
        return sum(command == "list" for command, _, _ in reads), sum(command == "info" for command, _, _ in reads)

    try:
        wait_for(lambda: "watching " in log.read_text() or watching.poll() is not None, 120, "the watch to start")
        assert watching.poll() is None, log.read_text()
        for reader in readers:
            reader.start()
        for batch in range(BATCHES):
            committed = read_manifest(str(index))["tables"]
            (notes / f"note-{batch % 4}.md").write_text(f"# Note {batch}\n\nBatch {batch} rewrote it.\n")
            wait_for(lambda: read_manifest(str(index))["tables"] != committed, 120, f"batch {batch}")
            read_before = finished_reads()
            # The next batch waits until each reader finishes a read after this commit landed (beside
            # its compaction and cleanup), so reads interleave with every commit however slow the
            # machine is.
            wait_for(
                lambda: all(now > before for now, before in zip(finished_reads(), read_before)),
                180,
                f"reads beside batch {batch}",
            )
    finally:
        stop.set()
        for reader in readers:
            if reader.is_alive():
                reader.join(180)
        watching.terminate()
        watching.wait(60)
    failed = [(command, code, stderr[-500:]) for command, code, stderr in reads if code or "damaged" in stderr]
    assert not failed, failed
    assert min(finished_reads()) >= BATCHES, reads
    kept, made = (
        len(list((index / "chunks.lance" / "_versions").iterdir())),
        read_manifest(str(index))["tables"]["chunks"],
    )
    assert kept < made / 2, f"{kept} of {made} versions kept: cleanup did not run beside the readers"
