"""A watcher started in this process: it loads the model its batches embed with before it watches,
so the first change is as quick as the later ones."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from arag_mcp.indexer import build
from arag_mcp.indexer.build import BuildOptions, build_index
from arag_mcp.indexer.watch import WatchOptions, watch_index

QUIET = BuildOptions(progress=False)


def test_a_watcher_loads_its_model_before_it_watches(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe first note.\n")
    index = tmp_path / "idx"
    build_index([notes], str(index), QUIET)
    build._embedder.cache_clear()  # as a new watcher process starts
    stop = threading.Event()
    caplog.set_level(logging.INFO, logger="arag_mcp.indexer.watch")
    watcher = threading.Thread(target=watch_index, args=(str(index), [], WatchOptions(QUIET), stop))
    watcher.start()
    try:
        deadline = time.monotonic() + 120
        while not any(record.getMessage().startswith("watching ") for record in caplog.records):
            assert watcher.is_alive() and time.monotonic() < deadline, "the watcher did not start watching"
            time.sleep(0.1)
        assert build._embedder.cache_info().currsize == 1, "the model was not loaded at start"
        synced = [record.getMessage() for record in caplog.records if record.getMessage().startswith("synced: ")]
        assert synced and "+0 ~0 -0" in synced[0], "the first sync had nothing to embed"
    finally:
        stop.set()
        watcher.join(30)
    assert not watcher.is_alive()
