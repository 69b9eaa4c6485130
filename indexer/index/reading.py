"""Reading a table: every row of a query in large batches, a read of an object store within its
deadline (store_reads.py), and a storage failure told as one line naming the table and the fix, or
the store that does not answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import pyarrow as pa

from .errors import IndexStoreError, StoreUnanswered
from .store import unanswered_message
from .stores import open_store

SCAN_BATCH_ROWS = 65_536
"""Rows per batch when every row of a query is read. LanceDB's default batch (about 1,000 rows)
crosses its event loop once per batch: the 10M positions of a 10M-sentence index took 2.2 s to
read in those, 0.1 s in batches of this size."""

KEYS_PER_QUERY = 1000
"""Values an `IN (...)` filter lists at most (`sql_lists`)."""

STORAGE_ERRORS = (OSError, RuntimeError, ValueError)
"""What LanceDB and Arrow raise for unreadable data (lance errors are RuntimeError or OSError)."""

T = TypeVar("T")
VERSION_GONE = "the committed table version is gone"


class VersionGone(IndexStoreError):
    """A table version the reader opened was cleaned up: a writer has committed since (read the
    manifest again), or the index is damaged."""


def scan(query: Any, batch_rows: int = SCAN_BATCH_ROWS) -> pa.RecordBatchReader:
    """Every row of `query` (a LanceDB query), in batches of `batch_rows`."""
    return query.limit(None).to_batches(batch_size=batch_rows)


def sql_list(values: Sequence[str]) -> str:
    """Strings as an SQL list for an `IN (...)` filter, quoted."""
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


def sql_lists(values: Sequence[str]) -> Iterator[str]:
    """`values` as SQL lists (`sql_list`) of KEYS_PER_QUERY values at most."""
    for first in range(0, len(values), KEYS_PER_QUERY):
        yield sql_list(values[first : first + KEYS_PER_QUERY])


def read(uri: str, table: str, fetch: Callable[[], T]) -> T:
    """`fetch()`, a read of `table` that a tool call waits for: on an object store, run within the
    store deadline and without the caller's thread (store_reads.py); its failure told as `reading` tells it."""
    with reading(uri, table):
        return open_store(uri).read(fetch)


@contextmanager
def reading(uri: str, table: str) -> Iterator[None]:
    """LanceDB reports a deleted or truncated data file as a long message with internal paths; the
    reader knows which table it was reading, which is what the user needs. A store that did not
    answer is named as such: the table may be whole, and rebuilding it would not help."""
    try:
        yield
    except StoreUnanswered:
        raise
    except STORAGE_ERRORS as exc:
        if open_store(uri).unanswered(exc):
            raise StoreUnanswered(unanswered_message(uri)) from None
        damage = _damage(exc)
        failure = VersionGone if damage == VERSION_GONE else IndexStoreError
        raise failure(
            f"{uri}: table {table!r} is damaged ({damage}); "
            f"rebuild the index with `arag-index build SOURCE... --index {uri} --rebuild`"
        ) from None


def _damage(exc: Exception) -> str:
    """What is wrong, in a few words free of paths."""
    message = str(exc).lower()
    if "no longer exist" in message:
        return VERSION_GONE
    if any(sign in message for sign in ("not found", "no such file", "does not exist")):
        return "a data file is missing"
    return "a data file cannot be read"
