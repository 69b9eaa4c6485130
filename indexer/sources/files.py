"""Read sources (files and folders) into documents.

Formats: plain text (`.txt`), Markdown (`.md`, `.markdown`; YAML front matter becomes metadata),
reStructuredText (`.rst`), HTML (`.html`, `.htm`, main content only: html_text.py), PDF (`.pdf`,
page by page: pdf_text.py), Word (`.docx`: docx_text.py), `.json` (a list of records, an object
holding one list of records, or one record) and `.jsonl` (one record a line, streamed). Files
record where their sections (heading paths) and pages begin.

A record is ``{"text": ..., "title"?: ..., "id"?: ..., ...}``: "contents", "content" or "body"
stand in for a missing "text" and "_id" for a missing "id"; every other field (and each field of a
nested "metadata" object) is kept as metadata. Records with empty text are skipped silently.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path, PurePosixPath

import pathspec

from .docx import docx_text
from .headings import FrontMatterKept, markdown_headings, rst_headings, split_front_matter
from .html import html_to_text
from .outline import BlockText, HeadingMarks, NotReadable, PageMarks, composed
from .pdf import pdf_text

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
TEXT_SUFFIXES = MARKDOWN_SUFFIXES | {".txt", ".rst"}
HTML_SUFFIXES = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | {".json", ".jsonl", ".pdf", ".docx"}
FILE_TYPES = {".markdown": "md", ".htm": "html"}
"""Suffixes whose file type is not the suffix itself: a type names the reader, not the spelling."""
TEXT_FIELDS = ("text", "contents", "content", "body")
ID_FIELDS = ("id", "_id")
BINARY_SNIFF_CHARS = 8192
CONTROL_SHARE = 0.05
"""Above this share of control characters (other than whitespace) in a file's start, it is not text."""
MAX_NESTING = 100
"""Lists and objects nested deeper in a record or in front matter are not read: records hold a few
levels, and turning a value into metadata recurses once per level."""
LINK_OUTSIDE = "a link to a file outside the folder; pass --follow-links to read it"
DEFAULT_EXCLUDE = ("node_modules/", "__pycache__/", "site-packages/")
"""Folders of installed code left out of every folder read, besides hidden files and folders."""
Metadata = dict[str, str | int | float | bool | None]


class CorpusError(Exception):
    """A user error in the corpus; the one-line message names the file (and line) and the fix."""


@dataclass(frozen=True)
class Document:
    """One document to index.

    doc_id: the record's "id" (else "_id"); for a whole file its resolved path (POSIX separators),
    so that the same file has one id however it was named; for an id-less record "<path>:<line>"
    (JSONL) or "<path>#<index>" (JSON). title: the record's "title" (else ""); for a file its first
    heading (a Markdown front matter's title first), HTML, PDF or DOCX title, else the file stem.
    source: what models are shown, never an absolute path: a folder's files as "<folder
    name>/<path inside it>", a file given alone by its name. path: the resolved path of the file
    read. metadata: the record's other fields, or a Markdown file's front matter (non-scalars
    JSON-encoded). headings, pages: where the file's sections and pages begin in `text`.
    file_type: what it was read as (`file_type`).
    """

    doc_id: str
    title: str
    source: str
    text: str
    metadata: Metadata = field(default_factory=dict)
    path: str = ""
    headings: HeadingMarks = ()
    pages: PageMarks = ()
    file_type: str = ""


INDEXED = "indexed, "
"""Begins the reason of a line about a file that was indexed all the same ("indexed, front matter
kept as text: ..."): told as skips are, as the build meets it, but not counted as one."""


@dataclass(frozen=True)
class SkippedFile:
    path: str
    """The file's source name, as documents from it would show it."""
    reason: str
    """e.g. "empty", "binary", "unreadable: <error>", "unsupported type .xyz", "line 3: invalid JSON ..."."""
    file: str = ""
    """The resolved path of the file (documents indexed from it are kept while it cannot be read)."""
    retry: bool = False
    """Skipped for a limit the build was given (sources/budget.py): the next sync reads the file again."""

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    @property
    def indexed(self) -> bool:
        """A notice about a file that was indexed (its front matter kept as text), not a skip."""
        return self.reason.startswith(INDEXED)


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

    @classmethod
    def at(cls, path: str | Path, exclude: Sequence[str] = (), follow_links: bool = False) -> Source:
        resolved = _resolve(Path(path).expanduser())
        return cls(resolved, resolved, tuple(exclude), follow_links)


class _Skip(Exception):
    """Why a file (or a record) yields no document; becomes a SkippedFile."""


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
    return _read_file(path, display_name(path, source.root), skipped)


def file_key(path: Path) -> str:
    """The resolved path documents read from `path`, a path `list_files` gave, record (`Document.path`)."""
    return _resolve_listed(path).as_posix()


def _resolve_listed(path: Path) -> Path:
    """`_resolve` for a path listed under a resolved source: the walk follows no folder link, so
    only a link itself needs resolving (resolving every path costs a system call per folder above it)."""
    return _resolve(path) if os.path.islink(path) else path


def is_left_out(path: Path, source: Source, exclude: Sequence[Path] = ()) -> bool:
    """Whether a folder read as `source` passes over `path` (which lies under `source.root`): it or a
    folder above it is hidden, matches DEFAULT_EXCLUDE or the source's patterns, or lies under `exclude`."""
    if any(_resolve(path).is_relative_to(inside) for inside in exclude):
        return True
    spec = _exclude_spec(source)
    relative = path.relative_to(source.root)
    parts = relative.parts
    for depth in range(1, len(parts) + 1):
        part_path = PurePosixPath(*parts[:depth]).as_posix()
        folder = depth < len(parts)
        if parts[depth - 1].startswith(".") or spec.match_file(part_path + "/" if folder else part_path):
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

    def wanted(path: str, name: str, folder: bool) -> bool:
        if name.startswith("."):
            return False
        # only a folder or a link can lead into an excluded path: the walk started outside them
        if (folder or os.path.islink(path)) and any(_resolve(Path(path)).is_relative_to(inside) for inside in excluded):
            return False
        relative = path[len(prefix) :]
        return not spec.match_file(relative + "/" if folder else relative)

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


def _read_file(path: Path, source: str, skipped: list[SkippedFile]) -> Iterator[Document]:
    """The documents of one file; a file that yields none, and each bad record, is listed in `skipped`."""
    file = _resolve(path).as_posix()
    count, skips_before = 0, len(skipped)
    try:
        _check_readable(path)
        for document in _file_documents(path, source, file, skipped):
            count += 1
            yield replace(document, file_type=file_type(path.name))
    except _Skip as reason:
        skipped.append(SkippedFile(source, str(reason), file))
        return
    if not count and len(skipped) == skips_before:
        skipped.append(SkippedFile(source, "empty", file))


def file_type(name: str) -> str:
    """The file type of a file name (or source), as results show it and scopes select it: "md",
    "html", "pdf", "jsonl", ...; "text" where the name has no extension."""
    suffix = PurePosixPath(name).suffix.lower()
    return FILE_TYPES.get(suffix, suffix.lstrip(".")) or "text"


def _check_readable(path: Path) -> None:
    """Only regular files of a supported type are read: a FIFO would block the build forever, a device never ends."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise _Skip(f"unsupported type {suffix or '(no extension)'}")
    try:
        mode = path.stat().st_mode
    except (OSError, RuntimeError) as error:
        raise _Skip(f"unreadable: {_error_text(error)}") from None
    if not stat.S_ISREG(mode):
        kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device or special file"
        raise _Skip(f"not a regular file ({kind})")


def _error_text(error: BaseException) -> str:
    if isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP:
        return "symbolic link loop"
    return getattr(error, "strerror", None) or str(error)


def _file_documents(path: Path, source: str, file: str, skipped: list[SkippedFile]) -> Iterable[Document]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _read_jsonl(path, source, file, skipped)
    if suffix == ".json":
        return _read_json(path, source, file, skipped)
    if suffix in TEXT_SUFFIXES:
        text = _decode(_read_text_bytes(path))
        headings: HeadingMarks = ()
        front_matter: dict[str, object] = {}
        if suffix in MARKDOWN_SUFFIXES:
            body_start = 0
            try:
                text, front_matter = split_front_matter(text)
                _check_nesting(front_matter, "front matter", "flatten it")
            except NotReadable as error:
                raise _Skip(f"unreadable: {error}") from None
            except FrontMatterKept as kept:
                skipped.append(SkippedFile(source, f"{INDEXED}{kept}", file))
                body_start = kept.body_start
            headings = tuple((body_start + offset, path) for offset, path in markdown_headings(text[body_start:]))
        elif suffix == ".rst":
            headings = rst_headings(text)
        title = str(front_matter.get("title") or "") or (headings[0][1][-1] if headings else "")
        metadata = _metadata(front_matter, {"title"})
        document = Document(file, title or path.stem, source, text, metadata, file, headings)
    else:
        title, blocks = _read_structured(path, suffix)
        document = Document(file, title or path.stem, source, blocks.text, {}, file, blocks.headings, blocks.pages)
    return [document] if document.text.strip() else []


def _read_structured(path: Path, suffix: str) -> tuple[str, BlockText]:
    """(title, text with its marks) of an HTML, PDF or DOCX file."""
    try:
        if suffix in HTML_SUFFIXES:
            return html_to_text(_decode(_read_text_bytes(path)))
        return (pdf_text if suffix == ".pdf" else docx_text)(path)
    except (_Skip, MemoryError):
        raise
    except NotReadable as error:
        raise _Skip(f"unreadable: {error}") from None
    except Exception as error:  # the libraries raise many exception types on damaged files; one must not stop a build
        raise _Skip(f"unreadable: {type(error).__name__}: {error}") from None


def _read_text_bytes(path: Path) -> bytes:
    """The bytes of a text-type file; unreadable files are skipped."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise _Skip(f"unreadable: {_error_text(error)}") from None


def _decode(raw: bytes) -> str:
    """UTF-8 (with or without a byte-order mark), else latin-1, composed (NFC); content that is not
    text is skipped."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    _check_text(text[:BINARY_SNIFF_CHARS])
    return composed(text)


def _check_text(start: str) -> None:
    """Binary content is told by NUL bytes or by many control characters, whatever the file's name."""
    controls = sum(1 for char in start if char < " " and char not in "\t\n\r\f\v" or "\x7f" <= char <= "\x9f")
    if "\x00" in start or controls > CONTROL_SHARE * len(start):
        raise _Skip("binary (not text)")


def _read_json(path: Path, source: str, file: str, skipped: list[SkippedFile]) -> Iterator[Document]:
    raw = _read_text_bytes(path)
    try:
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise _Skip(f"line {line}: not UTF-8 text; save the file as UTF-8") from None
    _check_text(content[:BINARY_SNIFF_CHARS])
    if not content.strip():
        return
    data = _parse_json(content, "fix the file")
    for index, record in enumerate(_record_list(data)):
        try:
            document = _record(record, source, f"{file}#{index}", f"item {index}", file)
        except _Skip as reason:
            skipped.append(SkippedFile(source, str(reason), file))
            continue
        if document:
            yield document


def _parse_json(content: str, fix: str, line: int | None = None) -> object:
    """Parsed JSON; `line` numbers the content where it is one line of a file."""
    try:
        return json.loads(content, parse_int=_json_int)
    except json.JSONDecodeError as error:
        where = f"line {line or error.lineno}"
        raise _Skip(f"{where}: invalid JSON ({error.msg}: column {error.colno}); {fix}") from None
    except RecursionError:
        where = f"line {line}: " if line else ""
        raise _Skip(f"{where}JSON nested too deeply to read; {fix}") from None


def _json_int(digits: str) -> int | str:
    """An integer of JSON; one of more digits than Python converts (sys.get_int_max_str_digits) stays text."""
    return int(digits) if len(digits) <= sys.get_int_max_str_digits() else digits


def _record_list(data: object) -> list[object]:
    """The records of a `.json` file: a list, the one list inside an object, or a single record."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if any(name in data for name in TEXT_FIELDS):
            return [data]
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) == 1:
            return lists[0]
    raise _Skip(
        'not a list of records like [{"text": ...}], an object holding one such list, or one record; restructure or exclude it'
    )


def _read_jsonl(path: Path, source: str, file: str, skipped: list[SkippedFile]) -> Iterator[Document]:
    """Records of a JSON Lines file, read one line at a time; a bad line is skipped and listed."""
    try:
        handle = path.open("rb")
    except OSError as error:
        raise _Skip(f"unreadable: {_error_text(error)}") from None
    with handle:
        _check_text(handle.read(BINARY_SNIFF_CHARS).decode("utf-8", errors="ignore"))
        handle.seek(0)
        for line_number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8-sig")
                if not line.strip():
                    continue
                record = _parse_json(line, "fix the line or remove it", line_number)
                document = _record(record, source, f"{file}:{line_number}", f"line {line_number}", file)
            except UnicodeDecodeError:
                skipped.append(SkippedFile(source, f"line {line_number}: not UTF-8 text; save the file as UTF-8", file))
                continue
            except _Skip as reason:
                skipped.append(SkippedFile(source, str(reason), file))
                continue
            if document:
                yield document


def _record(record: object, source: str, default_id: str, where: str, file: str) -> Document | None:
    """One record as a document; None when its text is empty."""
    if not isinstance(record, dict):
        raise _Skip(f'{where}: a record must be a JSON object like {{"text": ...}}; fix or remove it')
    try:
        _check_nesting(record, "record", "flatten it or remove it")
    except NotReadable as error:
        raise _Skip(f"{where}: {error}") from None
    text_field = next((name for name in TEXT_FIELDS if name in record), None)
    if text_field is None:
        raise _Skip(f'{where}: record has no "text" field; add one (or "content"/"body")')
    text = record[text_field]
    if not isinstance(text, str):
        raise _Skip(f'{where}: "{text_field}" must be a string; quote it or fix the record')
    if not text.strip():
        return None
    id_field = next((name for name in ID_FIELDS if record.get(name) not in (None, "")), None)
    title = record.get("title")
    return Document(
        doc_id=str(record[id_field]) if id_field else default_id,
        title=composed(str(title)) if title is not None else "",
        source=source,
        text=composed(text),
        metadata=_metadata(record, {text_field, "title", *ID_FIELDS}),
        path=file,
    )


def _check_nesting(value: object, what: str, fix: str) -> None:
    """NotReadable where lists and objects nest in `value` deeper than MAX_NESTING, found without recursion."""
    waiting = [(value, 0)]
    while waiting:
        item, depth = waiting.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list | tuple | set | frozenset):
            children = item
        else:
            continue
        if depth >= MAX_NESTING:
            raise NotReadable(f"{what} nested more than {MAX_NESTING} levels deep; {fix}")
        waiting.extend((child, depth + 1) for child in children)


def _metadata(record: dict[str, object], used: set[str]) -> Metadata:
    """The record's other fields, a nested "metadata" object flattened in; non-scalars JSON-encoded."""
    nested = record.get("metadata")
    fields = dict(nested) if isinstance(nested, dict) else {}
    fields.update(
        (key, value)
        for key, value in record.items()
        if key not in used and not (key == "metadata" and isinstance(value, dict))
    )
    plain = {str(key): _json_ready(value) for key, value in fields.items()}
    return {
        key: value
        if value is None or isinstance(value, str | int | float | bool)
        else json.dumps(value, ensure_ascii=False)
        for key, value in plain.items()
    }


def _json_ready(value: object) -> object:
    """`value` with what YAML front matter adds to JSON's types made JSON's: dates and times as ISO
    text, keys as text, sets as sorted lists, bytes and anything else as its text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(_json_ready(key)): _json_ready(item) for key, item in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_json_ready(item) for item in value), key=str)
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    return str(value)
