"""Where an index lives, chosen once per URI (`open_store`): a folder on this machine (`LocalStore`)
or a prefix in an object store (`ObjectStore`).

A store owns what differs between the two, so that the rest of the code asks it rather than whether
the index is remote:
- the small files beside the tables (the manifest, files.json): read, and replaced atomically (a
  rename in a folder; a single PUT in an object store), and how many reads a manifest gets before it
  is called corrupt (an object replaced while it is read can come back cut);
- what to say when no index is there;
- the builders' lock: a lock file in a folder (filelock, on every platform), which the operating
  system releases when its process dies, so a lock file left behind holds nothing; an object store
  relies on the manifest's commit;
- a read that a tool call waits for, bounded by the store deadline (store_reads.py), which failures
  mean that the store did not answer, and how it answers now (the server's health);
- the folder an index takes up on this machine, which reading sources passes over.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol, TypeVar

from .errors import IndexBusy, IndexStoreError
from .object_store import joined, missing_bucket, remote_filesystem
from .store import silence_named, unanswered
from .store_reads import StoreState, store_reads

log = logging.getLogger(__name__)
T = TypeVar("T")

LOCK_FILE = ".arag-build.lock"
OBJECT_READS = 3
"""Reads of an object store's manifest before it is called corrupt: one replaced while it is read
can come back cut (the length of the object before, the bytes of the one after)."""


class Store(Protocol):
    uri: str
    manifest_reads: int
    """Reads of the manifest before it is called corrupt."""
    folder: Path | None
    """The folder the index takes up on this machine, which reading sources passes over; None for
    an object store."""

    def read_file(self, name: str) -> bytes | None:
        """The bytes of the file `name` beside the tables, or None where there is none."""
        ...

    def write_file(self, name: str, raw: bytes) -> None:
        """Replace the file `name` beside the tables atomically."""
        ...

    def missing(self) -> str | None:
        """One line saying why no index can be here (no folder, no bucket) and what to do; None
        where the place exists."""
        ...

    def lock(self, wait: bool = True) -> AbstractContextManager[None]:
        """One builder at a time. Held by another: wait for it (one line says so), or with `wait`
        false raise IndexBusy."""
        ...

    def prepare(self) -> None:
        """Make the index's place ready for a writer."""
        ...

    def read(self, fetch: Callable[[], T]) -> T:
        """`fetch()`, a read that a tool call waits for, bounded by the store deadline."""
        ...

    def unanswered(self, exc: BaseException) -> bool:
        """Whether `exc` says that the store did not answer, rather than that what it holds is wrong."""
        ...

    def state(self) -> StoreState | None:
        """How the store answers (None where it always does: a folder)."""
        ...


class LocalStore:
    manifest_reads = 1

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.folder: Path | None = Path(uri)

    def read_file(self, name: str) -> bytes | None:
        try:
            return Path(self.uri, name).read_bytes()
        except FileNotFoundError:
            return None
        except PermissionError:
            raise IndexStoreError(
                f"{joined(self.uri, name)} is not readable by this user; let it read the index (chmod -R a+rX {self.uri})"
            ) from None
        except OSError:
            return None

    def write_file(self, name: str, raw: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.uri, prefix=f".{Path(name).stem}-", suffix=Path(name).suffix)
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # readable as the tables are, by a server running as another user (mkstemp makes 0600)
        os.replace(tmp, Path(self.uri, name))

    def missing(self) -> str | None:
        if Path(self.uri).exists():
            return None
        return (
            f"no index at {self.uri}: the folder does not exist; "
            f"build one with `arag-index build SOURCE --index {self.uri}` or fix --index"
        )

    @contextmanager
    def lock(self, wait: bool = True) -> Iterator[None]:
        import filelock

        self.prepare()
        lock = filelock.FileLock(Path(self.uri, LOCK_FILE), timeout=0)
        try:
            lock.acquire()
        except filelock.Timeout:
            if not wait:
                raise IndexBusy(f"another arag-index command is changing {self.uri}") from None
            log.warning(
                "another arag-index command or a watcher's batch is changing %s; waiting for it to finish (Ctrl-C stops)",
                self.uri,
            )
            lock.acquire(timeout=-1)
        try:
            yield
        finally:
            lock.release()

    def prepare(self) -> None:
        Path(self.uri).mkdir(parents=True, exist_ok=True)

    def read(self, fetch: Callable[[], T]) -> T:
        return fetch()

    def unanswered(self, exc: BaseException) -> bool:
        return False

    def state(self) -> StoreState | None:
        return None


class ObjectStore:
    manifest_reads = OBJECT_READS

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.folder: Path | None = None

    def read_file(self, name: str) -> bytes | None:
        try:
            fs, path = remote_filesystem(joined(self.uri, name))
            with silence_named(self.uri), fs.open_input_stream(path) as stream:
                return stream.read()
        except FileNotFoundError:
            return None
        except PermissionError:
            raise IndexStoreError(
                f"{joined(self.uri, name)} is not readable with these credentials; let them read the index"
            ) from None
        except OSError as exc:
            raise IndexStoreError(
                f"{self.uri}: cannot read {name} ({exc}); check the URI, the credentials and the endpoint"
            ) from None

    def write_file(self, name: str, raw: bytes) -> None:
        fs, path = remote_filesystem(joined(self.uri, name))
        with fs.open_output_stream(path) as stream:
            stream.write(raw)

    def missing(self) -> str | None:
        return missing_bucket(self.uri)

    @contextmanager
    def lock(self, wait: bool = True) -> Iterator[None]:
        with silence_named(self.uri):
            problem = missing_bucket(self.uri)
        if problem:
            raise IndexStoreError(problem)
        yield

    def prepare(self) -> None:
        """Nothing to make: an object store's prefix exists once something is written under it."""

    def read(self, fetch: Callable[[], T]) -> T:
        return store_reads(self.uri).run(fetch)

    def unanswered(self, exc: BaseException) -> bool:
        return unanswered(exc)

    def state(self) -> StoreState | None:
        return store_reads(self.uri).state()


def is_remote(uri: str) -> bool:
    """Whether `uri` names an object store: the one place that asks (`open_store`, `normalise_uri`)."""
    return "://" in uri and not uri.startswith("file://")


def open_store(uri: str) -> Store:
    """The store of the index at `uri` (normalised: `normalise_uri`)."""
    return ObjectStore(uri) if is_remote(uri) else LocalStore(uri)


def normalise_uri(uri: str) -> str:
    """Local paths become absolute (GUI hosts start servers in '/'); remote URIs pass through."""
    if is_remote(uri):
        return uri.rstrip("/")
    return str(Path(uri.removeprefix("file://")).expanduser().resolve())
