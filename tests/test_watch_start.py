"""A watcher and the commands beside it, in this process: the watcher loads the model its batches
embed with before it watches, so the first change is as quick as the later ones; a command that
finds the index busy waits its turn."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from arag_mcp.indexer import build_model
from arag_mcp.indexer.build_options import BuildOptions, WatchOptions
from arag_mcp.indexer.indexes import Index

from .conftest import HASHED_MODEL

QUIET = BuildOptions(model=HASHED_MODEL, progress=False)


def test_a_watcher_loads_its_model_before_it_watches(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe first note.\n")
    index = tmp_path / "idx"
    Index(str(index)).add([notes], QUIET)
    build_model._embedder.cache_clear()  # as a new watcher process starts
    stop = threading.Event()
    caplog.set_level(logging.INFO, logger="arag_mcp.indexer.watch")
    watcher = threading.Thread(target=Index(str(index)).watch, args=([], WatchOptions(QUIET), stop))
    watcher.start()
    try:
        deadline = time.monotonic() + 120
        while not any(record.getMessage().startswith("watching ") for record in caplog.records):
            assert watcher.is_alive() and time.monotonic() < deadline, "the watcher did not start watching"
            time.sleep(0.1)
        assert build_model._embedder.cache_info().currsize == 1, "the model was not loaded at start"
        synced = [record.getMessage() for record in caplog.records if record.getMessage().startswith("synced: ")]
        assert synced and "+0 ~0 -0" in synced[0], "the first sync had nothing to embed"
    finally:
        stop.set()
        watcher.join(30)
    assert not watcher.is_alive()


def test_a_command_waits_for_the_index_another_holds_then_runs(tmp_path: Path):
    """`add` while another command (or a watcher's batch) holds the index: one line says it waits,
    and once the lock is released it adds its file."""
    import filelock
    from arag_mcp.indexer.index.stores import LOCK_FILE

    from .conftest import run_cli

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe first note.\n")
    index = tmp_path / "idx"
    Index(str(index)).add([notes], QUIET)
    (tmp_path / "b.md").write_text("# B\n\nThe second note.\n")
    results = []
    with filelock.FileLock(index / LOCK_FILE, timeout=0):
        adding = threading.Thread(
            target=lambda: results.append(
                run_cli("arag_mcp.indexer", "add", str(tmp_path / "b.md"), "--index", str(index), "--quiet")
            )
        )
        adding.start()
        time.sleep(3)
        assert adding.is_alive() and not results, "the command did not wait"
    adding.join(120)
    [result] = results
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("waiting for it to finish") == 1, result.stderr
    assert "added 1," in result.stderr, result.stderr
