"""Reading a table: every row of a query in large batches, and a storage failure told as one line
naming the table and the fix."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from .manifest import IndexStoreError

SCAN_BATCH_ROWS = 65_536
"""Rows per batch when every row of a query is read. LanceDB's default batch (about 1,000 rows)
crosses its event loop once per batch: the 10M positions of a 10M-sentence index took 2.2 s to
read in those, 0.1 s in batches of this size."""

STORAGE_ERRORS = (OSError, RuntimeError, ValueError)
"""What LanceDB and Arrow raise for unreadable data (lance errors are RuntimeError or OSError)."""


def scan(query: Any, batch_rows: int = SCAN_BATCH_ROWS) -> pa.RecordBatchReader:
    """Every row of `query` (a LanceDB query), in batches of `batch_rows`."""
    return query.limit(None).to_batches(batch_size=batch_rows)


@contextmanager
def reading(uri: str, table: str) -> Iterator[None]:
    """LanceDB reports a deleted or truncated data file as a long message with internal paths; the
    reader knows which table it was reading, which is what the user needs."""
    try:
        yield
    except STORAGE_ERRORS as exc:
        raise IndexStoreError(
            f"{uri}: table {table!r} is damaged ({_damage(exc)}); "
            f"rebuild the index with `arag-index build SOURCE... --index {uri} --rebuild`"
        ) from None


def _damage(exc: Exception) -> str:
    """What is wrong, in a few words free of paths."""
    message = str(exc).lower()
    if "no longer exist" in message:
        return "the committed table version is gone"
    if any(sign in message for sign in ("not found", "no such file", "does not exist")):
        return "a data file is missing"
    return "a data file cannot be read"
