"""One command at a time changes a local index: a lock file in its folder (filelock, on every platform).

The lock is the operating system's: a process that dies releases it, so a lock file left behind
holds nothing, and nobody need delete it. A command waits its turn, saying so once (a watcher's
batch takes seconds); a watcher's own batches do not wait (they retry, holding no lock meanwhile)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from .manifest import IndexStoreError, is_remote, missing_bucket

LOCK_FILE = ".arag-build.lock"
log = logging.getLogger(__name__)


class IndexBusy(IndexStoreError):
    """Another command is changing the index."""


@contextmanager
def build_lock(uri: str, wait: bool = True) -> Iterator[None]:
    """One builder at a time on a local index (object stores rely on the manifest commit). Held by
    another: wait for it (one line says so), or with `wait` false raise IndexBusy."""
    if is_remote(uri):
        problem = missing_bucket(uri)
        if problem:
            raise IndexStoreError(problem)
        yield
        return
    Path(uri).mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(Path(uri, LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        if not wait:
            raise IndexBusy(f"another arag-index command is changing {uri}") from None
        log.warning(
            "another arag-index command or a watcher's batch is changing %s; waiting for it to finish (Ctrl-C stops)",
            uri,
        )
        lock.acquire(timeout=-1)
    try:
        yield
    finally:
        lock.release()
