"""One command at a time changes a local index: a lock file in its folder (filelock, on every platform)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from .manifest import IndexStoreError, is_remote, missing_bucket

LOCK_FILE = ".arag-build.lock"


class IndexBusy(IndexStoreError):
    """Another command is changing the index."""


@contextmanager
def build_lock(uri: str) -> Iterator[None]:
    """One builder at a time on a local index (object stores rely on the manifest commit)."""
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
        raise IndexBusy(
            f"another arag-index command is changing {uri}; wait for it to finish "
            f"(if none is running, delete {Path(uri, LOCK_FILE)})"
        ) from None
    try:
        yield
    finally:
        lock.release()
