"""The query encoder an index carries: the ONNX encoder folder its vectors were made with.

An index is the unit of deployment: a folder or object-store prefix that any server answers from,
on any machine, with nothing to export and no hub. The encoder lives in `encoder/<digest>/` beside
the tables; the manifest names that folder and each file's SHA-256, so a reader refuses files that
are missing or altered instead of embedding queries with another model. A remote index's encoder
is copied once into the user's cache, under its digest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Protocol

from arag_mcp.indexer.user_cache import cache_root

from .errors import IndexStoreError
from .file_states import file_sha256
from .manifest import ENCODER_DIR, REBUILD_HINT, EncoderFiles
from .object_store import joined, remote_filesystem
from .store import silence_named
from .stores import is_remote

CHUNK_BYTES = 1 << 20
_VERIFIED: set[tuple] = set()
"""Encoder folders whose files matched their checksums in this process, with the files' times then."""


class EncoderDamaged(IndexStoreError):
    """The index's encoder files are missing or differ from what its manifest recorded."""


def store_encoder(uri: str, source: Path) -> EncoderFiles:
    """Put the encoder folder `source` into the index at `uri` (before a commit names it) and
    describe it. A folder already there with the same digest is kept; locally, files are hard links
    to `source` where it shares the disk."""
    names = sorted(path.name for path in source.iterdir() if path.is_file())
    checksums = {name: file_sha256(source / name) for name in names}
    sizes = {name: (source / name).stat().st_size for name in names}
    digest = hashlib.sha256("".join(f"{n}:{c}\n" for n, c in checksums.items()).encode()).hexdigest()[:16]
    files = EncoderFiles(f"{ENCODER_DIR}/{digest}", checksums, sizes)
    _carried(uri).put(source, files)
    return files


def check_encoder_present(uri: str, files: EncoderFiles) -> None:
    """EncoderDamaged where a local index's encoder files are missing or of another size (cheap:
    stats only; an object store's are checked as they are fetched)."""
    _carried(uri).check_present(files)


def encoder_folder(uri: str, files: EncoderFiles) -> Path:
    """A local folder holding the index's encoder, every file checked against the manifest's checksum.
    A remote index's encoder is downloaded once into the cache. EncoderDamaged names the fix."""
    folder = _carried(uri).folder(files)
    stamp = (str(folder), files.digest, tuple((n, (folder / n).stat().st_mtime_ns) for n in sorted(files.sizes)))
    if stamp not in _VERIFIED:  # a watcher's batches, one after another, check the files once
        for name, checksum in files.checksums.items():
            if file_sha256(folder / name) != checksum:
                raise _altered(uri, files, name)
        _VERIFIED.add(stamp)
    return folder


def drop_other_encoders(uri: str, keep: EncoderFiles | None) -> None:
    """Remove the encoder folders a committed manifest no longer names (an earlier model's)."""
    _carried(uri).drop_others(keep.digest if keep else None)


class CarriedEncoders(Protocol):
    """Where an index keeps its encoder folders: in its own folder, or under its object-store prefix."""

    def put(self, source: Path, files: EncoderFiles) -> None: ...

    def check_present(self, files: EncoderFiles) -> None: ...

    def folder(self, files: EncoderFiles) -> Path:
        """A local folder holding the files (not yet checked against their checksums)."""
        ...

    def drop_others(self, kept: str | None) -> None: ...


class LocalEncoders:
    def __init__(self, uri: str) -> None:
        self.uri = uri

    def put(self, source: Path, files: EncoderFiles) -> None:
        target = Path(self.uri, files.folder)
        if _matches(target, files):
            return
        work = Path(tempfile.mkdtemp(prefix=f".{files.digest}-", dir=_made(Path(self.uri, ENCODER_DIR))))
        work.chmod(0o755)  # readable as the tables are, by a server running as another user
        try:
            for name in files.sizes:
                try:
                    os.link(source / name, work / name)
                except OSError:  # another file system, or links not supported
                    shutil.copyfile(source / name, work / name)
            shutil.rmtree(target, ignore_errors=True)
            work.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def check_present(self, files: EncoderFiles) -> None:
        for name, size in files.sizes.items():
            path = Path(self.uri, files.folder, name)
            if not path.is_file():
                raise EncoderDamaged(
                    f"{self.uri}: its query encoder file {files.folder}/{name} is missing; {REBUILD_HINT}"
                )
            if path.stat().st_size != size:
                raise _altered(self.uri, files, name)

    def folder(self, files: EncoderFiles) -> Path:
        self.check_present(files)
        return Path(self.uri, files.folder)

    def drop_others(self, kept: str | None) -> None:
        for folder in Path(self.uri, ENCODER_DIR).glob("*"):
            if folder.is_dir() and folder.name != kept:
                shutil.rmtree(folder, ignore_errors=True)


class RemoteEncoders:
    def __init__(self, uri: str) -> None:
        self.uri = uri

    def put(self, source: Path, files: EncoderFiles) -> None:
        import pyarrow.fs as pafs

        for name, size in files.sizes.items():
            fs, path = remote_filesystem(joined(self.uri, f"{files.folder}/{name}"))
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.File and info.size == size:
                continue
            with (source / name).open("rb") as local, fs.open_output_stream(path) as remote:
                shutil.copyfileobj(local, remote, CHUNK_BYTES)

    def check_present(self, files: EncoderFiles) -> None:
        """Nothing to stat: the files are checked as they are fetched."""

    def folder(self, files: EncoderFiles) -> Path:
        folder = cache_root() / "encoders" / files.digest
        if not _matches(folder, files):
            self._download(files, folder)
        return folder

    def drop_others(self, kept: str | None) -> None:
        import pyarrow.fs as pafs

        fs, root = remote_filesystem(joined(self.uri, ENCODER_DIR))
        for info in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True)):
            if info.type == pafs.FileType.Directory and info.base_name != kept:
                fs.delete_dir(info.path)

    def _download(self, files: EncoderFiles, folder: Path) -> None:
        work = Path(tempfile.mkdtemp(prefix=f".{files.digest}-", dir=_made(folder.parent)))
        try:
            for name in files.sizes:
                fs, path = remote_filesystem(joined(self.uri, f"{files.folder}/{name}"))
                try:
                    with (
                        silence_named(self.uri),
                        fs.open_input_stream(path) as remote,
                        (work / name).open("wb") as local,
                    ):
                        shutil.copyfileobj(remote, local, CHUNK_BYTES)
                except FileNotFoundError:
                    raise EncoderDamaged(
                        f"{self.uri}: its query encoder file {files.folder}/{name} is missing; {REBUILD_HINT}"
                    ) from None
            shutil.rmtree(folder, ignore_errors=True)
            try:
                work.rename(folder)
            except OSError:  # another server finished the same download first
                if not _matches(folder, files):
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _carried(uri: str) -> CarriedEncoders:
    """Where the encoders of the index at `uri` are kept, by where the index lives (stores.is_remote)."""
    return RemoteEncoders(uri) if is_remote(uri) else LocalEncoders(uri)


def _altered(uri: str, files: EncoderFiles, name: str) -> EncoderDamaged:
    return EncoderDamaged(
        f"{uri}: its query encoder file {files.folder}/{name} differs from the one the index was built with "
        f"(checksum); {REBUILD_HINT}"
    )


def _matches(folder: Path, files: EncoderFiles) -> bool:
    return all((folder / n).is_file() and (folder / n).stat().st_size == s for n, s in files.sizes.items())


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder
