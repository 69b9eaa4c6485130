"""Read sources (files and folders) into documents.

A folder is walked in sorted order, leaving out what its patterns exclude; each file is read by the
reader of its format (formats.py) into documents (document.py), a file its include patterns name as
plain text where no reader knows its suffix. Files record where their sections (heading paths) and
pages begin.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath

import pathspec

from .compressed import inner_name
from .document import CorpusError, Document, FileInput, Skip, SkippedFile, error_text
from .formats import FILE_TYPES, reader_for
from .ignored import RepositoryIgnores

LINK_OUTSIDE = "a link to a file outside the folder; pass --follow-links to read it"
DEFAULT_EXCLUDE = ("node_modules/", "__pycache__/", "site-packages/")
"""Folders of installed code left out of every folder read, besides hidden files and folders."""


@dataclass(frozen=True)
class Source:
    """What to read: `path`, which is `root` or lies inside it. Documents are named relative to the
    root, so a file added later under a folder already indexed gets the name the folder gives it."""

    root: Path
    path: Path
    exclude: tuple[str, ...] = ()
    """gitignore-style patterns, matched against paths relative to `root`."""
    follow_links: bool = False
    """Read the files that links in a folder point to outside it; otherwise they are skipped, so a
    link in a cloned or unpacked folder cannot bring a file from elsewhere (a key, a password
    store) into an index served to a model."""
    gitignore: bool = True
    """Leave out what the folder's `.gitignore` files name (ignored.py)."""
    include: tuple[str, ...] = ()
    """gitignore-style patterns, matched as `exclude` is, of files to read as plain text where no
    reader knows their suffix (`is_included`)."""

    @classmethod
    def at(
        cls, path: str | Path, exclude: Sequence[str] = (), follow_links: bool = False, include: Sequence[str] = ()
    ) -> Source:
        resolved = _resolve(Path(path).expanduser())
        return cls(resolved, resolved, tuple(exclude), follow_links, include=tuple(include))


def iter_documents(
    sources: Sequence[str | Path | Source], skipped: list[SkippedFile], exclude: Sequence[str | Path] = ()
) -> Iterator[Document]:
    """Documents from files and folders, appending what could not be read to `skipped`.

    Folders are read recursively in sorted order; links to folders are not descended into. Hidden
    files and folders, DEFAULT_EXCLUDE, each source's exclude patterns and anything under an
    `exclude` path are passed over silently; links to files outside the folder (unless the source
    follows links), files of other types, unreadable, binary or malformed files and malformed
    records are skipped and listed. A missing source raises CorpusError.
    """
    for path, source in list_files(sources, skipped, exclude):
        yield from read_file(path, source, skipped)


def list_files(
    sources: Sequence[str | Path | Source], skipped: list[SkippedFile], exclude: Sequence[str | Path] = ()
) -> Iterator[tuple[Path, Source]]:
    """The files `iter_documents` reads, each with the source it is read as part of, without reading them."""
    excluded = [_resolve(Path(path)) for path in exclude]
    for given in sources:
        source = given if isinstance(given, Source) else Source.at(given)
        if not os.path.lexists(source.path):
            raise CorpusError(f"{given}: no such file or folder; check the path")
        if source.path.is_dir():
            for path in _walk(source, excluded, skipped):
                yield path, source
        else:
            yield source.path, source


def read_file(path: Path, source: Source, skipped: list[SkippedFile]) -> Iterator[Document]:
    """The documents of one file listed by `list_files`; what could not be read is appended to `skipped`."""
    return _read_file(path, display_name(path, source.root), is_included(path, source), skipped)


def is_included(path: Path, source: Source) -> bool:
    """Whether the source's include patterns name `path` (under its root; a file given alone by its
    name), or the file inside it where it is compressed: `*.conf` includes `app.conf.gz`."""
    if not source.include:
        return False
    relative = path.name if path == source.root else path.relative_to(source.root).as_posix()
    spec = _include_spec(source.include)
    return spec.match_file(relative) or spec.match_file(inner_name(relative))


@lru_cache(maxsize=64)
def _include_spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """Parsed once per set of patterns: it is asked for every file read."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def file_key(path: Path) -> str:
    """The resolved path documents read from `path`, a path `list_files` gave, record (`Document.path`)."""
    return _resolve_listed(path).as_posix()


def _resolve_listed(path: Path) -> Path:
    """`_resolve` for a path listed under a resolved source: the walk follows no folder link, so
    only a link itself needs resolving (resolving every path costs a system call per folder above it)."""
    return _resolve(path) if os.path.islink(path) else path


def is_left_out(path: Path, source: Source, exclude: Sequence[Path] = ()) -> bool:
    """Whether a folder read as `source` passes over `path` (which lies under `source.root`): it or a
    folder above it is hidden, matches DEFAULT_EXCLUDE or the source's patterns, is left out by the
    folder's own rules (ignored.py), or lies under `exclude`."""
    if any(_resolve(path).is_relative_to(inside) for inside in exclude):
        return True
    spec = _exclude_spec(source)
    ignores = RepositoryIgnores(source.root.as_posix(), source.gitignore)
    parts = path.relative_to(source.root).parts
    for depth in range(1, len(parts) + 1):
        part_path = PurePosixPath(*parts[:depth]).as_posix()
        folder = depth < len(parts)
        if parts[depth - 1].startswith(".") or spec.match_file(part_path + "/" if folder else part_path):
            return True
        if ignores.reason(f"{source.root.as_posix()}/{part_path}", folder) is not None:
            return True
    return False


def _exclude_spec(source: Source) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines([*DEFAULT_EXCLUDE, *source.exclude])


def _resolve(path: Path) -> Path:
    """The absolute path with symbolic links followed as far as they go (a loop stays unresolved)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: RuntimeError before Python 3.13, OSError after
        return Path(os.path.abspath(path))


def _walk(source: Source, excluded: list[Path], skipped: list[SkippedFile]) -> list[Path]:
    """Visible, not excluded files under `source.path`, sorted by path; unreadable folders are listed as skipped.
    Paths are handled as strings: a sync of an unchanged tree spends most of its time here."""
    if any(source.path.is_relative_to(inside) for inside in excluded):
        return []
    spec = _exclude_spec(source)
    prefix = source.root.as_posix().rstrip("/") + "/"

    ignores = RepositoryIgnores(source.root.as_posix(), source.gitignore)

    def wanted(path: str, name: str, folder: bool) -> bool:
        if name.startswith("."):
            return False
        # only a folder or a link can lead into an excluded path: the walk started outside them
        if (folder or os.path.islink(path)) and any(_resolve(Path(path)).is_relative_to(inside) for inside in excluded):
            return False
        relative = path[len(prefix) :]
        if spec.match_file(relative + "/" if folder else relative):
            return False
        reason = ignores.reason(path, folder)
        if reason is not None:
            skipped.append(SkippedFile(display_name(Path(path), source.root) + ("/" if folder else ""), reason))
        return reason is None

    def unreadable(error: OSError) -> None:
        path = Path(error.filename)
        skipped.append(SkippedFile(display_name(path, source.root), f"unreadable: {error.strerror}", path.as_posix()))

    def inside(path: str) -> bool:
        link = Path(path)
        if source.follow_links or not link.is_symlink() or _resolve(link).is_relative_to(source.root):
            return True
        skipped.append(SkippedFile(display_name(link, source.root), LINK_OUTSIDE, link.as_posix()))
        return False

    found: list[str] = []
    for folder, folders, files in os.walk(source.path, onerror=unreadable):
        folders[:] = [name for name in folders if wanted(f"{folder}/{name}", name, folder=True)]
        found.extend(
            f"{folder}/{name}"
            for name in files
            if wanted(f"{folder}/{name}", name, folder=False) and inside(f"{folder}/{name}")
        )
    return [Path(path) for path in sorted(found, key=lambda path: path.split("/"))]


def display_name(path: Path, root: Path) -> str:
    """Files of a folder are named from the folder itself (`docs/guide/intro.md`), a file alone by its name."""
    return (Path(root.name) / path.relative_to(root)).as_posix() if path != root else root.name


def _read_file(path: Path, source: str, included: bool, skipped: list[SkippedFile]) -> Iterator[Document]:
    """The documents of one file (`included`: read as plain text where no reader knows its suffix);
    a file that yields none, and each bad record, is listed in `skipped`."""
    file = _resolve(path).as_posix()
    count, skips_before = 0, len(skipped)
    try:
        input = FileInput(path, path.name, source, file, plain_text=included)
        reader = reader_for(input)
        _check_regular(path)
        for document in reader(input, skipped):
            count += 1
            yield replace(document, file_type=file_type(path.name))
    except Skip as reason:
        skipped.append(SkippedFile(source, str(reason), file))
        return
    if not count and len(skipped) == skips_before:
        skipped.append(SkippedFile(source, "empty", file))


def file_type(name: str) -> str:
    """The file type of a file name (or source), as results show it and scopes select it: "md",
    "html", "pdf", "jsonl", ...; "text" where the name has no extension. A compressed file has the
    type of the file inside ("md" for `guide.md.gz`)."""
    suffix = PurePosixPath(inner_name(name)).suffix.lower()
    return FILE_TYPES.get(suffix, suffix.lstrip(".")) or "text"


def _check_regular(path: Path) -> None:
    """Only regular files are read: a FIFO would block the build forever, a device never ends."""
    try:
        mode = path.stat().st_mode
    except (OSError, RuntimeError) as error:
        raise Skip(f"unreadable: {error_text(error)}") from None
    if not stat.S_ISREG(mode):
        kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device or special file"
        raise Skip(f"not a regular file ({kind})")
