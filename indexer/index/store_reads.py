"""Reads of an object store, each waited for at most the store deadline, on a bounded pool of threads.

A store that stops answering must not take the caller's thread with it: a server answers its tools on
a shared pool of threads, and calls that need no store (their answer is in memory) need one too. So a
read runs on this store's own threads and its caller waits at most the deadline; at most
STORE_WAITERS callers wait on a store at once; and once a read found the store silent, reads fail at
once (one every PROBE_SECONDS goes through to find out whether it is back) until one is answered.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from .errors import StoreUnanswered
from .store import store_deadline, store_location, unanswered, unanswered_message

STORE_THREADS = 8
"""Reads of one store running at once; LanceDB runs each read's requests in parallel besides."""
STORE_WAITERS = 32
"""Callers waiting on one store at once; more are refused at once, so that a silent store holds at
most this many of a server's threads (the MCP SDK runs tools on 40: the others stay free for calls
that need no store), while a store that answers is rarely read by so many calls at once."""
PROBE_SECONDS = 2.0
"""While a store is silent, how often a read goes through to find out whether it answers again."""

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoreState:
    """Whether the store answered its last read, and since when it has not."""

    location: str
    answering: bool
    silent_seconds: float | None


class StoreReads:
    """The reads of one object store (see the module's docstring)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._pool = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="arag-store")
        self._changed = threading.Condition()
        self._waiting = 0
        self._silent_since: float | None = None
        self._silences = 0
        """How many times a read found the store silent: waiters give up when it grows."""
        self._last_probe = 0.0

    def run(self, fetch: Callable[[], T]) -> T:
        """`fetch()` run on the store's threads; StoreUnanswered where the store is silent or does not
        answer within the deadline. Its other errors are raised as they are."""
        deadline = store_deadline().seconds
        with self._changed:
            self._admit()
            self._waiting += 1
            silences = self._silences
        try:
            future: Future[T] = self._pool.submit(fetch)
            future.add_done_callback(self._notify)
            with self._changed:
                self._changed.wait_for(lambda: future.done() or self._silences != silences, deadline)
            if not future.done():
                future.cancel()  # not yet started: it never will be
                self._silent()
                raise StoreUnanswered(unanswered_message(self.uri))
            try:
                result = future.result()
            except Exception as exc:
                if isinstance(exc, StoreUnanswered) or unanswered(exc):
                    self._silent()
                    raise StoreUnanswered(unanswered_message(self.uri)) from None
                self._answered()  # the store answered: what it holds is wrong
                raise
            self._answered()
            return result
        finally:
            with self._changed:
                self._waiting -= 1

    def state(self) -> StoreState:
        with self._changed:
            since = self._silent_since
            return StoreState(
                store_location(self.uri), since is None, None if since is None else time.monotonic() - since
            )

    def _admit(self) -> None:
        """Refuse a read at once where the store is silent (but for one probe every PROBE_SECONDS) or
        enough callers wait on it already. Called holding the lock."""
        now = time.monotonic()
        if self._silent_since is not None:
            if now - self._last_probe < PROBE_SECONDS:
                raise StoreUnanswered(unanswered_message(self.uri))
            self._last_probe = now
        if self._waiting >= STORE_WAITERS:
            raise StoreUnanswered(
                f"the object store at {store_location(self.uri)} is slow to answer: {self._waiting} reads are "
                "waiting on it; retry in a few seconds"
            )

    def _notify(self, _: Future) -> None:
        with self._changed:
            self._changed.notify_all()

    def _silent(self) -> None:
        with self._changed:
            now = time.monotonic()
            self._last_probe = now  # the next probe waits its turn from here: a call's later reads fail at once
            if self._silent_since is None:
                self._silent_since = now
                log.warning("%s", unanswered_message(self.uri))
            self._silences += 1
            self._changed.notify_all()

    def _answered(self) -> None:
        with self._changed:
            if self._silent_since is not None:
                log.warning("the object store at %s answers again", store_location(self.uri))
            self._silent_since = None


_stores: dict[str, StoreReads] = {}
_stores_lock = threading.Lock()


def store_reads(uri: str) -> StoreReads:
    """The reads of the store that holds `uri` (one per index URI in a process)."""
    with _stores_lock:
        reads = _stores.get(uri)
        if reads is None:
            reads = _stores[uri] = StoreReads(uri)
        return reads
