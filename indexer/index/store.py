"""How long an object store is given to answer, and telling a store that does not answer from a damaged
index.

LanceDB and Arrow wait minutes for a store that stopped answering (LanceDB retries a request three
times within three minutes, each attempt allowed 30 s, and a read makes several requests); the
deadline set here bounds each request and its retries, and `store_reads.py` bounds a whole read."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .errors import StoreUnanswered

DEFAULT_STORE_SECONDS = 30.0
STORE_RETRIES = 2
"""Retries of one request after a failed attempt: a dropped connection is tried again, a dead store
is given up on."""
MAX_CONNECT_SECONDS = 5.0

_UNANSWERED_SIGNS = (
    "timed out",
    "timeout",
    "connection refused",
    "connect error",
    "error sending request",
    "error trying to connect",
    "connection reset",
    "connection closed",
    "broken pipe",
    "couldn't connect",
    "could not connect",
    "network_connection",
    "dns error",
    "unexpected eof",
    "incompletemessage",
    "retries, max_retries",
)
"""Words of the errors LanceDB (object_store, reqwest, hyper) and Arrow (the AWS SDK, curl) raise when
no answer came: what tells an unreachable store from a damaged table."""


@dataclass(frozen=True)
class StoreDeadline:
    """Seconds an object store has to answer one read or write, its retries included."""

    seconds: float = DEFAULT_STORE_SECONDS

    @property
    def attempt_seconds(self) -> float:
        """Each request's own limit: the first attempt and its retries fit within `seconds`."""
        return self.seconds / (STORE_RETRIES + 1)

    @property
    def connect_seconds(self) -> float:
        return min(MAX_CONNECT_SECONDS, self.attempt_seconds)

    def lance_options(self) -> dict[str, str]:
        """LanceDB's `storage_options` (object_store's client and retry settings)."""
        return {
            "connect_timeout": f"{self.connect_seconds:g}s",
            "timeout": f"{self.attempt_seconds:g}s",
            "client_max_retries": str(STORE_RETRIES),
            "client_retry_timeout": str(max(1, int(self.seconds))),
        }

    def arrow_options(self) -> dict[str, float]:
        """pyarrow.fs.S3FileSystem's timeouts."""
        return {"connect_timeout": self.connect_seconds, "request_timeout": self.attempt_seconds}


_current = StoreDeadline()
_lock = threading.Lock()


def store_deadline() -> StoreDeadline:
    """The deadline this process gives object stores (`--store-timeout`)."""
    return _current


def set_store_deadline(seconds: float) -> None:
    global _current
    with _lock:
        _current = StoreDeadline(seconds)


def connect(uri: str) -> Any:
    """A LanceDB connection to `uri`, its object-store requests bounded by the store deadline."""
    import lancedb

    remote = "://" in uri and not uri.startswith("file://")
    return lancedb.connect(uri, storage_options=store_deadline().lance_options() if remote else None)


def unanswered(exc: BaseException) -> bool:
    """Whether `exc` says that the store did not answer (timed out, refused, dropped the connection)
    rather than that what it holds is wrong."""
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return True
    message = str(exc).lower()
    return any(sign in message for sign in _UNANSWERED_SIGNS)


def store_location(uri: str) -> str:
    """What to name when a store does not answer: the endpoint where one is set, else the URI."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT")
    if endpoint and uri.split("://", 1)[0] in ("s3", "s3a"):
        return f"{endpoint} ({uri})"
    return uri


def unanswered_message(uri: str) -> str:
    """One line for a read or write the store did not answer in time."""
    return (
        f"the object store at {store_location(uri)} does not answer within {store_deadline().seconds:g} s; "
        "the index is not damaged: retry once the store is reachable, "
        "and check the endpoint, the network and the store's status (--store-timeout sets the wait)"
    )


@contextmanager
def silence_named(uri: str) -> Iterator[None]:
    """An OSError that says the object store at `uri` did not answer (`unanswered`) becomes
    StoreUnanswered, one line naming the deadline; any other passes through."""
    try:
        yield
    except OSError as exc:
        if unanswered(exc):
            raise StoreUnanswered(unanswered_message(uri)) from None
        raise
