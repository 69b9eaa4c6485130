"""Files read within a budget of time and memory, in a child process that can be stopped.

One reader process serves a whole build, and the builds after it in the same process (a watcher's
batches), so that thousands of small files, or a batch of one, cost no start: it reads
one file at a time and sends its documents in parts (a small file in one). The build waits at most
`seconds` for the next part, which comes within a second while documents come (so a slow file, or
one slow record of a JSON Lines file, breaks the budget), then stops the process and skips the
file, naming the limit; the process may map at most `memory` bytes more than it held once started
(RLIMIT_AS, where the platform has it), and a file that needs more is skipped the same way. A
fresh process reads the next file.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from .archive_limits import MB
from .document import Document, SkippedFile
from .files import Source, display_name, file_key, read_file

log = logging.getLogger(__name__)

PART_CHARS = 1 << 20
PART_SECONDS = 1.0
SECONDS_OPTION = "--file-seconds"
MEMORY_OPTION = "--file-memory"


@dataclass(frozen=True)
class FileBudget:
    seconds: float = 60.0
    """The longest wait for the next part of a file's documents."""
    memory: int = 1024 * MB
    """The most memory the reader may map beyond its own, in bytes."""


_shared: BudgetedReader | None = None
_shared_in_use = threading.Lock()


@contextmanager
def file_reader(budget: FileBudget) -> Iterator[BudgetedReader]:
    """The reader for one build: this process's shared one, kept between builds so that a watcher's
    batches start no process (as build.py loads the model once), or, while another build holds it,
    one of its own, stopped after. The shared process ends with this one (a daemon)."""
    global _shared
    if not _shared_in_use.acquire(blocking=False):
        with BudgetedReader(budget) as reader:
            yield reader
        return
    try:
        if _shared is None or _shared.budget != budget:
            if _shared is not None:
                _shared.close()
            _shared = BudgetedReader(budget)
        _shared.start()
        yield _shared
    finally:
        _shared_in_use.release()


class BudgetedReader:
    """`read_file` in a child process held to a FileBudget; use it as a context manager."""

    def __init__(self, budget: FileBudget = FileBudget()) -> None:
        self.budget = budget
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._ready = False
        self._in_process = False

    def __enter__(self) -> BudgetedReader:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, path: Path, source: Source, skipped: list[SkippedFile]) -> Iterator[Document]:
        """The documents of one file, as `read_file` gives them; a file over the budget is appended
        to `skipped` with the limit it broke and the option that raises it."""
        if self._in_process or not self._started():
            yield from read_file(path, source, skipped)
            return
        assert self._connection is not None
        self._connection.send((path, source))
        finished = False
        try:
            while True:
                kind, value = self._next(path, source)
                if kind == "over":
                    finished = True
                    skipped.append(SkippedFile(display_name(path, source.root), value, file_key(path), retry=True))
                    self.close()
                    return
                documents, skips = value
                skipped.extend(skips)
                yield from documents
                if kind == "done":
                    finished = True
                    return
        finally:
            if not finished:  # the caller stopped early: what the process still sends belongs to this file
                self.close()

    def close(self) -> None:
        if self._process is None:
            return
        assert self._connection is not None
        if self._process.is_alive():
            try:
                self._connection.send(None)
            except OSError:
                pass
            self._process.join(1)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._connection.close()
        self._process = self._connection = None
        self._ready = False

    def _started(self) -> bool:
        """Whether the process is ready to read; where it cannot start (a main module it cannot
        import again, as in `python - < script`), files are read in this process from then on."""
        if self._connection is None:
            self._start()
        assert self._connection is not None and self._process is not None
        if not self._ready:  # loading the readers' libraries is no file's time
            try:
                self._ready = self._connection.recv() == ("ready", None)
            except (EOFError, OSError):
                self._process.join()
                log.warning(
                    "the reader process did not start (exit code %s); files are read in this process, "
                    "without %s and %s",
                    self._process.exitcode,
                    SECONDS_OPTION,
                    MEMORY_OPTION,
                )
                self.close()
                self._in_process = True
        return self._ready

    def start(self) -> None:
        """Start the process where none runs, so that it loads the readers while the caller works."""
        if self._process is None and not self._in_process:
            self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")  # the build holds model threads: a fork could copy held locks
        self._connection, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, self.budget.memory), daemon=True)
        with _main_script_hidden():
            self._process.start()
        child.close()

    def _next(self, path: Path, source: Source) -> tuple[str, object]:
        """The process's next message; ("over", why) where it breaks the budget or stops."""
        assert self._connection is not None and self._process is not None
        seconds = self.budget.seconds
        if not self._connection.poll(seconds):
            self._process.kill()
            return "over", (
                f"reading it took more than {seconds:g} s (limit {SECONDS_OPTION} {seconds:g}); "
                f"raise {SECONDS_OPTION} or exclude the file"
            )
        try:
            return self._connection.recv()
        except (EOFError, OSError):
            self._process.join()
            return "over", (
                f"its reader stopped (exit code {self._process.exitcode}), most likely over the memory limit "
                f"({MEMORY_OPTION} {self.budget.memory // MB}); raise {MEMORY_OPTION} or exclude the file"
            )


@contextmanager
def _main_script_hidden() -> Iterator[None]:
    """A spawned process runs the parent's main script again before its target (so that what the
    script defines can be unpickled there). The reader needs nothing of it, and a script that
    builds an index at its top level, with no `if __name__ == "__main__":`, would build again in
    the reader and wait for the index's lock forever: while the reader starts, the script's path is
    hidden from multiprocessing, which then starts it as it would from `python -c`."""
    main = sys.modules["__main__"]
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None:  # `python -m` runs are not run again
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _serve(connection: Connection, memory: int) -> None:
    """The reader process: read each (path, source) received, sending its documents and skips in
    parts, ("part", (documents, skips)), then ("done", (documents, skips)); stop at None. A part
    goes once it holds PART_CHARS of text or took PART_SECONDS, so that a small file costs one
    message and a large one streams. The readers' libraries are loaded before the memory limit is
    set, so that it bounds what reading costs, and ("ready", None) is sent then."""
    import docutils.parsers.rst  # noqa: F401
    import docx  # noqa: F401
    import pypdf  # noqa: F401
    import tree_sitter  # noqa: F401

    _limit_memory(memory)
    try:
        _answer(connection, memory)
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the build went away (killed): no one to answer
        return


def _answer(connection: Connection, memory: int) -> None:
    """`_serve`'s loop, once the reader is ready."""
    connection.send(("ready", None))
    while (request := connection.recv()) is not None:
        path, source = request
        documents: list[Document] = []
        skipped: list[SkippedFile] = []
        chars, since = 0, time.monotonic()
        try:
            for document in read_file(path, source, skipped):
                documents.append(document)
                chars += len(document.text)
                if chars >= PART_CHARS or time.monotonic() - since >= PART_SECONDS:
                    connection.send(("part", (documents, skipped)))
                    documents, skipped, chars, since = [], [], 0, time.monotonic()
        except MemoryError:
            documents, skipped = [], []
            connection.send(("over", _memory_reason(memory)))
            return
        except Exception as error:  # a reader's own failure skips the one file, never the build
            where = traceback.extract_tb(error.__traceback__)[-1]
            reason = f"unreadable: {type(error).__name__}: {error} (at {Path(where.filename).name}:{where.lineno})"
            skipped.append(SkippedFile(display_name(path, source.root), reason, file_key(path)))
        connection.send(("done", (documents, skipped)))


def _memory_reason(memory: int) -> str:
    return (
        f"reading it took more than {memory // MB} MB of memory (limit {MEMORY_OPTION} {memory // MB}); "
        f"raise {MEMORY_OPTION} or exclude the file"
    )


def _limit_memory(memory: int) -> None:
    """Cap the process's address space at what it maps now plus `memory` (not on Windows)."""
    try:
        import resource
    except ImportError:
        return
    mapped = _mapped_bytes()
    if mapped is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped + memory
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _mapped_bytes() -> int | None:
    """The process's address space in bytes (Linux: /proc); None where it cannot be read."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
