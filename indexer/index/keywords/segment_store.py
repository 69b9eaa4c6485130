"""Where an index's keyword segments (segments.py) live: chosen once per index, by its URI.

A local index keeps them in URI/keywords/<name>/, written under a hidden name and renamed whole.
A remote index keeps them under the same prefix on the object store; a segment is immutable once
named, so each one is fetched once into the user's cache (as the encoder is) and read from there,
and the segments a writer makes are kept in the cache as they are uploaded.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from arag_mcp.indexer.user_cache import cache_root

from ..errors import IndexStoreError
from ..object_store import remote_filesystem
from ..store import silence_named
from ..stores import is_remote
from .segments import file_checksum

FOLDER = "keywords"
DEAD_PREFIX = "dead-"
"""Begins the name of a file of a segment's removed chunks (segments.py)."""
WRITING_PREFIX = ".writing-"
COPY_BYTES = 1 << 20
READ_ONLY = 0o444
"""A published segment's files: a copy of another index over this one (`cp` without `-f`, as
its owner) then fails on them rather than cutting short a file that a server reads."""


class SegmentStore(Protocol):
    def new_folder(self) -> AbstractContextManager[Path]:
        """A local folder to write a segment into; removed unless `publish` took it."""
        ...

    def publish(self, work: Path, name: str) -> None:
        """Name the segment written in `work`: from here on `folder(name)` holds it."""
        ...

    def add_file(self, name: str, path: Path) -> None:
        """Add the file `path` (written locally) to the named segment, under its own name."""
        ...

    def folder(self, name: str, files: Iterable[str]) -> Path:
        """A local folder holding the named segment with `files` (fetched where they are not yet here)."""
        ...

    def remove_others(self, kept: dict[str, str | None]) -> None:
        """Remove every segment but those named in `kept`, and in those every file of removed
        chunks but the one `kept` names, as far as the system lets."""
        ...

    def damage(self, name: str, sizes: Mapping[str, int], checksums: Mapping[str, str]) -> str | None:
        """What is wrong with the named segment's files where they are read, by their sizes
        against those written (`sizes`: a stat per file) and by the checksums of those `checksums`
        names (each such file read through); None where nothing is."""
        ...


def _file_damage(folder: Path, file: str, size: int, checksum: str | None, missing_is_damage: bool) -> str | None:
    try:
        found = (folder / file).stat().st_size
    except FileNotFoundError:
        return f"{folder / file} is missing" if missing_is_damage else None
    if found != size:
        return f"{folder / file} is {found} bytes, not the {size} written"
    if checksum is not None and file_checksum(folder / file) != checksum:
        return f"{folder / file} does not hold the bytes written"
    return None


def segment_name() -> str:
    """A new segment's name: unique, so a name never means two contents."""
    return uuid.uuid4().hex[:16]


@contextmanager
def _work_folder(parent: Path) -> Iterator[Path]:
    """A hidden folder in `parent` to write a segment into; removed unless it was renamed away."""
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=WRITING_PREFIX, dir=parent))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


class LocalSegments:
    def __init__(self, uri: str) -> None:
        self.root = Path(uri, FOLDER)

    def new_folder(self) -> AbstractContextManager[Path]:
        return _work_folder(self.root)

    def publish(self, work: Path, name: str) -> None:
        for path in work.iterdir():
            path.chmod(READ_ONLY)
        work.chmod(0o755)  # readable as the tables are, by a server running as another user
        work.rename(self.root / name)

    def add_file(self, name: str, path: Path) -> None:
        path.chmod(READ_ONLY)
        path.rename(self.root / name / path.name)

    def folder(self, name: str, files: Iterable[str]) -> Path:
        return self.root / name

    def damage(self, name: str, sizes: Mapping[str, int], checksums: Mapping[str, str]) -> str | None:
        for file, size in sizes.items():
            if problem := _file_damage(self.root / name, file, size, checksums.get(file), missing_is_damage=True):
                return problem
        return None

    def remove_others(self, kept: dict[str, str | None]) -> None:
        if not self.root.is_dir():
            return
        for folder in self.root.iterdir():
            if folder.name not in kept:
                shutil.rmtree(folder, ignore_errors=True)
                continue
            for file in folder.glob(f"{DEAD_PREFIX}*"):
                if file.name != kept[folder.name]:
                    file.unlink(missing_ok=True)


class RemoteSegments:
    def __init__(self, uri: str) -> None:
        self.uri = uri.rstrip("/")
        self.cache = cache_root() / "segments" / hashlib.sha256(self.uri.encode()).hexdigest()[:16]

    def new_folder(self) -> AbstractContextManager[Path]:
        return _work_folder(self.cache)

    def publish(self, work: Path, name: str) -> None:
        for path in sorted(work.iterdir()):
            self._upload(name, path)
        target = self.cache / name
        if not target.exists():
            work.rename(target)

    def add_file(self, name: str, path: Path) -> None:
        self._upload(name, path)
        target = self.cache / name
        if target.is_dir():
            path.rename(target / path.name)

    def folder(self, name: str, files: Iterable[str]) -> Path:
        target = self.cache / name
        for file in files:
            if not (target / file).is_file():
                self._download(name, file, target)
        return target

    def damage(self, name: str, sizes: Mapping[str, int], checksums: Mapping[str, str]) -> str | None:
        """A cached copy of another size or checksum than written is dropped, to be fetched again when read."""
        for file, size in sizes.items():
            if _file_damage(self.cache / name, file, size, checksums.get(file), missing_is_damage=False):
                (self.cache / name / file).unlink(missing_ok=True)
        return None

    def remove_others(self, kept: dict[str, str | None]) -> None:
        import pyarrow.fs as pafs

        fs, root = remote_filesystem(f"{self.uri}/{FOLDER}")
        for info in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True)):
            if info.type != pafs.FileType.Directory:
                continue
            if info.base_name not in kept:
                fs.delete_dir(info.path)
                continue
            for file in fs.get_file_info(pafs.FileSelector(info.path)):
                if file.base_name.startswith(DEAD_PREFIX) and file.base_name != kept[info.base_name]:
                    fs.delete_file(file.path)
        if self.cache.is_dir():
            for folder in self.cache.iterdir():
                if folder.name not in kept and not folder.name.startswith(WRITING_PREFIX):
                    shutil.rmtree(folder, ignore_errors=True)

    def _upload(self, name: str, path: Path) -> None:
        fs, remote = remote_filesystem(f"{self.uri}/{FOLDER}/{name}/{path.name}")
        with silence_named(self.uri), path.open("rb") as local, fs.open_output_stream(remote) as stream:
            shutil.copyfileobj(local, stream, COPY_BYTES)

    def _download(self, name: str, file: str, target: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        fs, remote = remote_filesystem(f"{self.uri}/{FOLDER}/{name}/{file}")
        fd, work = tempfile.mkstemp(prefix=f".{file}-", dir=target)
        try:
            with silence_named(self.uri), fs.open_input_stream(remote) as stream, open(fd, "wb") as local:
                shutil.copyfileobj(stream, local, COPY_BYTES)
            Path(work).rename(target / file)
        except FileNotFoundError:
            raise IndexStoreError(f"{self.uri}: keyword segment {name}/{file} is missing") from None
        finally:
            Path(work).unlink(missing_ok=True)


def segment_store(uri: str) -> SegmentStore:
    return RemoteSegments(uri) if is_remote(uri) else LocalSegments(uri)
