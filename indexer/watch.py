"""`arag-index watch`: keep an index current while its sources change.

It starts with a sync, then waits for the file system's change events (watchfiles) and hands each
debounced batch of changed paths to the index's `sync_paths` (indexes.py), which reads only those of them whose size, time
or content changed, embeds their new and changed documents and removes those of files gone,
committing as every build does. A path that vanished is held back for DELETE_GRACE_SECONDS, however
many batches pass meanwhile, so that a `git checkout` or a save that deletes and writes again keeps
the document; beside an added file it is offered as a rename (moved without embedding where the
contents match) and otherwise waits. A sync of every source every `reconcile_seconds` (cheap:
metadata only) catches events the system dropped. A batch commits without merging keyword
segments; the merges that are due run once no change came for IDLE_MERGE_SECONDS (or, where changes
keep coming, between two batches after MERGE_AT_LATEST_SECONDS), so that a save is searchable as
soon as its batch commits, however large the index. One watcher per index: a second
one stops at once with WatcherRunning.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import filelock
from arag_mcp.indexer.index.errors import IndexBusy
from arag_mcp.indexer.index.stores import open_store
from arag_mcp.indexer.sources.files import Source, is_included, is_left_out
from arag_mcp.indexer.sources.formats import may_read

from .build import index_folders
from .build_options import BuildOptions, WatchOptions
from .build_summary import BuildSummary, report_skips

log = logging.getLogger(__name__)

WATCH_LOCK_FILE = ".arag-watch.lock"
DELETE_GRACE_SECONDS = 2.0
DEBOUNCE_MS = 1600
"""The longest a batch gathers changes (watchfiles' debounce)."""
QUIET_MS = 300
"""A batch is handed over once no change came for this long (watchfiles' step): an editor's save,
several events, lands in one batch."""
WAKE_MS = 1000
"""How often the loop wakes without events: held-back deletions and the reconcile sweep are due then."""
BUSY_RETRY_SECONDS = 5.0
IDLE_MERGE_SECONDS = 5.0
"""How long no change must come before the keyword segments a batch left due are merged."""
MERGE_AT_LATEST_SECONDS = 60.0
"""How long the merges a batch left due wait at most while changes keep coming: a folder saved
every few seconds never idles, and its segments would gather without end."""
M_ARENA_MAX = -8
"""glibc's mallopt parameter for the number of malloc arenas."""


class WatcherRunning(Exception):
    """Another watcher keeps this index current."""


class WatchedIndex(Protocol):
    """What the watcher does to the index it keeps current (indexes.Index)."""

    uri: str

    @property
    def sources(self) -> list[Source]: ...

    def add(self, sources: Sequence[str], options: BuildOptions) -> BuildSummary: ...

    def load_model(self, options: BuildOptions) -> None: ...

    def sync(self, options: BuildOptions) -> BuildSummary: ...

    def sync_paths(
        self, paths: Sequence[Path], options: BuildOptions, renamed_from: Sequence[Path]
    ) -> BuildSummary: ...

    def merge_segments(self, wait_for_lock: bool) -> int: ...


def watch_lock_path(uri: str) -> Path:
    """A local index's watch lock lies in it; an object store's, in this machine's temporary folder."""
    folder = open_store(uri).folder
    if folder is None:
        return Path(tempfile.gettempdir(), f"arag-watch-{hashlib.sha256(uri.encode()).hexdigest()[:16]}.lock")
    return folder / WATCH_LOCK_FILE


@contextmanager
def watch_lock(uri: str) -> Iterator[None]:
    """Held while this process watches the index at `uri`; WatcherRunning where another holds it."""
    path = watch_lock_path(uri)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(path, timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise WatcherRunning(f"another arag-index watch keeps {uri} current; this one is not needed") from None
    try:
        yield
    finally:
        lock.release()


def batch_line(summary: BuildSummary, seconds: float) -> str:
    """What one batch did, in one line: `+2 ~1 -0 in 1.4 s; 3,141 documents`."""
    return f"+{summary.added} ~{summary.updated} -{summary.removed} in {seconds:.1f} s; {summary.documents:,} documents"


def watch(index: WatchedIndex, paths: Sequence[str], options: WatchOptions, stop: threading.Event) -> None:
    """Sync the index (adding `paths` as sources first, as `add` does), then keep it current until
    `stop` is set or SIGINT/SIGTERM arrives; the batch in hand is finished first."""
    _share_malloc_arenas()
    with watch_lock(index.uri), _stopping_on_signals(stop):
        started = time.perf_counter()
        first = index.add(paths, options.build) if paths else index.sync(options.build)
        report_skips(first)
        log.info("synced: %s", batch_line(first, time.perf_counter() - started))
        index.load_model(options.build)  # here, not at the first change
        _keep_current(index, index.sources, options, stop)


def _keep_current(index: WatchedIndex, roots: Sequence[Source], options: WatchOptions, stop: threading.Event) -> None:
    """Sync the paths that change under `roots` in debounced batches until `stop` is set; sweep
    every source now and then, and merge the keyword segments when no change comes."""
    import watchfiles

    uri = index.uri

    # A busy index: retry later. Merges: when idle.
    options = replace(options, build=replace(options.build, wait_for_lock=False, merge_segments=False))

    logging.getLogger("watchfiles").setLevel(
        logging.WARNING
    )  # its "N changes detected" lines; ours are the batch lines
    inside = index_folders(uri)
    watched = sorted({root.path if root.path.is_dir() else root.path.parent for root in roots})
    log.info("watching %s for %s", ", ".join(map(str, watched)), uri)
    wanted = _filter(roots, inside)
    held: dict[Path, float] = {}
    """Paths waiting → when they are synced if nothing else changes: vanished ones, and all of a
    batch while another command holds the index."""
    busy = False
    swept = time.monotonic()
    merges = MergeSchedule()
    events = watchfiles.watch(
        *watched,
        watch_filter=lambda change, path: wanted(Path(path)),
        debounce=DEBOUNCE_MS,
        step=QUIET_MS,
        stop_event=stop,
        rust_timeout=WAKE_MS,
        yield_on_timeout=True,
        force_polling=True if options.poll else None,
        recursive=any(root.path.is_dir() for root in roots),
        raise_interrupt=False,
    )
    for changed in events:
        now = time.monotonic()
        paths = {Path(path) for _, path in changed}
        present = {path for path in paths if os.path.lexists(path)}
        for path in paths - present:
            held.setdefault(path, now + DELETE_GRACE_SECONDS)
        for path in present:
            held.pop(path, None)
        added = any(change == watchfiles.Change.added for change, path in changed if Path(path) in present)
        ripe = {path for path, when in held.items() if when <= now}
        if present or ripe:
            # A vanished path waits out its grace in every batch; beside an added file it may be a
            # rename, which the sync moves without embedding where the contents match.
            batch = sorted(present | ripe)
            renamed_from = sorted(set(held) - ripe) if added else []
            if _sync(lambda: index.sync_paths(batch, options.build, renamed_from)):
                for path in ripe:
                    held.pop(path, None)
                busy = False
                merges.synced(time.monotonic())
                if merges.due(time.monotonic(), changing=True) and _merge(index):
                    merges.merged()
            else:
                held.update(dict.fromkeys(batch, now + BUSY_RETRY_SECONDS))
                if not busy:
                    log.info("another arag-index command is changing the index; this batch waits for it")
                busy = True
        elif now - swept >= options.reconcile_seconds:
            swept = now
            _sync(lambda: index.sync(options.build))
            merges.swept(now)
        elif merges.due(now, changing=bool(held)) and _merge(index):
            merges.merged()
        if options.parent_pid is not None and os.getppid() != options.parent_pid:
            log.info("the process that started this watcher is gone")
            stop.set()
        if stop.is_set():
            break
    log.info("stopped watching %s", uri)


@dataclass
class MergeSchedule:
    """When the keyword segments that batches left due are merged: once no change came for
    IDLE_MERGE_SECONDS, or between two batches once they waited MERGE_AT_LATEST_SECONDS."""

    waiting_since: float | None = None
    """When the first batch since the last merge committed (None: no merge may be due)."""
    last_sync: float = 0.0

    def synced(self, now: float) -> None:
        self.waiting_since = self.waiting_since if self.waiting_since is not None else now
        self.last_sync = now

    def swept(self, now: float) -> None:
        """A sweep that found nothing to do leaves merges due, and does not put them off."""
        self.waiting_since = self.waiting_since if self.waiting_since is not None else now

    def due(self, now: float, changing: bool) -> bool:
        if self.waiting_since is None:
            return False
        idle = not changing and now - self.last_sync >= IDLE_MERGE_SECONDS
        return idle or now - self.waiting_since >= MERGE_AT_LATEST_SECONDS

    def merged(self) -> None:
        self.waiting_since = None


def _share_malloc_arenas() -> None:
    """Keep a long watch's memory flat: with glibc's default arenas (8 per core), what LanceDB's and
    ONNX Runtime's threads free after a batch stays in their arenas and the process grows batch after
    batch; two shared arenas reuse it (bench/README.md, Freshness). Elsewhere than glibc, nothing."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 2)
    except (OSError, AttributeError):  # a C library without mallopt
        pass


def _filter(roots: Sequence[Source], inside: Sequence[Path]) -> Callable[[Path], bool]:
    """Which changed paths matter: under a source and not left out of it (hidden, excluded, the
    index's own folder), and a file of a type read (its include patterns count), or gone (perhaps a folder)."""

    def wanted(path: Path) -> bool:
        root = next((root for root in roots if path.is_relative_to(root.path)), None)
        if root is None or is_left_out(path, root, inside):
            return False
        if may_read(path.name, is_included(path, root)):
            return True
        return os.path.isdir(path) or not os.path.lexists(path)

    return wanted


def _sync(run: Callable[[], BuildSummary]) -> bool:
    """Run one sync and log its line; False where another command held the index (to retry)."""
    started = time.perf_counter()
    try:
        summary = run()
    except IndexBusy:
        return False
    except Exception as exc:  # noqa: BLE001 - one batch's failure must not stop the watch; the sweep retries it
        log.error("this batch failed, the index keeps its last commit: %s", exc)
        return True
    summary.show_skips(left_out=False)
    if summary.added or summary.updated or summary.removed:
        log.info("%s", batch_line(summary, time.perf_counter() - started))
    return True


def _merge(index: WatchedIndex) -> bool:
    """Merge the keyword segments that are due, saying so in one line; False where another command
    held the index (to retry)."""
    started = time.perf_counter()
    try:
        segments = index.merge_segments(wait_for_lock=False)
    except IndexBusy:
        return False
    except Exception as exc:  # noqa: BLE001 - a failed merge leaves the committed index as it was
        log.error("merging keyword segments failed, the index keeps its last commit: %s", exc)
        return True
    if segments:
        log.info("merged keyword segments in %.1f s; %d segments", time.perf_counter() - started, segments)
    return True


@contextmanager
def _stopping_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` (the batch in hand is finished); a second SIGINT interrupts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def finish(number: int, frame: object) -> None:
        log.info("finishing the batch in hand, then stopping (%s)", signal.Signals(number).name)
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    saved = {number: signal.signal(number, finish) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
