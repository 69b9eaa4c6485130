"""Read sources (files and folders) into documents.

Formats: plain text (`.txt`), Markdown (`.md`, `.markdown`), reStructuredText (`.rst`), HTML
(`.html`, `.htm`, text only), PDF (`.pdf`, text via pypdf), `.json` (a list of records, an object
holding one list of records, or one record) and `.jsonl` (one record a line). A record is
``{"text": ..., "title"?: ..., "id"?: ..., ...}``; "contents", "content" or "body" stand in for a
missing "text", "_id" for "id", and the other fields (and those of a "metadata" object) are kept
as metadata.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import regex

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
RECORD_SUFFIXES = frozenset({".json", ".jsonl"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | RECORD_SUFFIXES | {".pdf"}
TEXT_FIELDS = ("text", "contents", "content", "body")
ID_FIELDS = ("id", "_id")
Metadata = dict[str, str | int | float | bool | None]


class CorpusError(Exception):
    """A user error in the corpus; the message names the file (and line) and the fix."""


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    source: str
    text: str
    metadata: Metadata = field(default_factory=dict)


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


def iter_documents(
    sources: Sequence[str | Path], skipped: list[SkippedFile], exclude: Sequence[Path] = ()
) -> Iterator[Document]:
    """Documents from files and folders (recursive, sorted, hidden entries and `exclude` skipped).

    Files that yield nothing are appended to `skipped`; a missing source or malformed JSON raises
    CorpusError.
    """
    excluded = [Path(path).resolve() for path in exclude]
    for source in sources:
        root = Path(source).expanduser()
        if not root.exists():
            raise CorpusError(f"{source}: no such file or folder; check the path")
        if root.is_dir():
            for path in _walk(root, excluded):
                yield from _read_file(path, _display(path, root), skipped)
        elif root.suffix.lower() in SUPPORTED_SUFFIXES:
            yield from _read_file(root, root.as_posix(), skipped)
        else:
            skipped.append(SkippedFile(str(root), f"unsupported extension {root.suffix or '(none)'}"))


def _walk(root: Path, excluded: list[Path]) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).parts
        if any(part.startswith(".") for part in relative) or not path.is_file():
            continue
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            continue
        resolved = path.resolve()
        if any(resolved.is_relative_to(folder) for folder in excluded):
            continue
        yield path


def _display(path: Path, root: Path) -> str:
    """A folder's files are named relative to the folder's parent: `docs/guide/intro.md`."""
    return (Path(root.resolve().name) / path.relative_to(root)).as_posix()


def _read_file(path: Path, source: str, skipped: list[SkippedFile]) -> Iterator[Document]:
    suffix = path.suffix.lower()
    if suffix in RECORD_SUFFIXES:
        count = 0
        for document in _read_records(path, source):
            count += 1
            yield document
        if not count:
            skipped.append(SkippedFile(source, "empty"))
        return
    try:
        title, text = _read_pdf(path) if suffix == ".pdf" else _read_text_file(path, suffix)
    except _Skip as reason:
        skipped.append(SkippedFile(source, str(reason)))
        return
    if not text.strip():
        skipped.append(SkippedFile(source, "empty"))
        return
    yield Document(source, title or path.stem, source, text)


class _Skip(Exception):
    """Why a file yields no document."""


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _Skip(f"unreadable: {exc.strerror or exc}") from None


def _decode(raw: bytes) -> str:
    if b"\x00" in raw[:8192]:
        raise _Skip("binary")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _read_text_file(path: Path, suffix: str) -> tuple[str, str]:
    text = _decode(_read_bytes(path))
    if suffix in HTML_SUFFIXES:
        return html_to_text(text)
    return _heading(text), text


_MARKDOWN_HEADING = regex.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", regex.M)
_RST_HEADING = regex.compile(r"^(\S[^\n]*)\n([=\-~^`'\"*+#:.])\2{2,}\s*$", regex.M)


def _heading(text: str) -> str:
    """The first Markdown or reStructuredText heading, if any."""
    candidates = [m for m in (_MARKDOWN_HEADING.search(text), _RST_HEADING.search(text)) if m]
    if not candidates:
        return ""
    return min(candidates, key=lambda m: m.start()).group(1).strip()


def _read_pdf(path: Path) -> tuple[str, str]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise _Skip("unreadable: encrypted PDF")
        text = "\n\n".join((page.extract_text() or "").strip() for page in reader.pages)
        title = str((reader.metadata or {}).get("/Title") or "").strip()
    except (PyPdfError, OSError, ValueError, KeyError) as exc:
        raise _Skip(f"unreadable: {type(exc).__name__}: {exc}") from None
    return title, text


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, with block elements as paragraph breaks."""

    BLOCKS = frozenset(
        "p div br li ul ol h1 h2 h3 h4 h5 h6 tr table section article header footer blockquote pre dd dt".split()
    )
    HIDDEN = frozenset({"script", "style", "head", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.title = ""
        self.h1 = ""
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        if tag in ("title", "h1"):
            self._in = tag
        if tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self.hidden:
            self.hidden -= 1
        if tag == self._in:
            self._in = None
        if tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in == "title":
            self.title += data
        elif self._in == "h1" and not self.h1:
            self.h1 = data
        if not self.hidden:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page: `<title>` else the first `<h1>`; visible text only."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    text = regex.sub(r"[ \t]+", " ", "".join(parser.parts))
    text = regex.sub(r"\s*\n\s*\n\s*", "\n\n", text).strip()
    return (parser.title or parser.h1).strip(), text


def _read_records(path: Path, source: str) -> Iterator[Document]:
    if path.suffix.lower() == ".jsonl":
        yield from _read_jsonl(path, source)
        return
    raw = _decode_records(path)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CorpusError(
            f"{source} line {exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno}); fix the file"
        ) from None
    for index, record in enumerate(_record_list(data, source)):
        document = _record(record, source, f"{source}#{index}", f"item {index}")
        if document:
            yield document


def _decode_records(path: Path) -> str:
    try:
        return _decode(_read_bytes(path))
    except _Skip as reason:
        raise CorpusError(f"{path}: {reason}; a .json corpus must be readable UTF-8 text") from None


def _record_list(data: object, source: str) -> list:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        lists = [value for value in data.values() if isinstance(value, list)]
        if any(name in data for name in TEXT_FIELDS):
            return [data]
        if len(lists) == 1:
            return lists[0]
    raise CorpusError(f'{source}: expected a list of records like [{{"text": ...}}, ...]; restructure the file')


def _read_jsonl(path: Path, source: str) -> Iterator[Document]:
    try:
        handle = path.open("r", encoding="utf-8-sig", errors="strict")
        with handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CorpusError(
                        f"{source} line {number}: invalid JSON ({exc.msg}, column {exc.colno}); fix the line or remove it"
                    ) from None
                document = _record(record, source, f"{source}:{number}", f"line {number}")
                if document:
                    yield document
    except UnicodeDecodeError:
        raise CorpusError(f"{source}: not UTF-8 text; save the file as UTF-8") from None


def _record(record: object, source: str, default_id: str, where: str) -> Document | None:
    if not isinstance(record, dict):
        raise CorpusError(f'{source} {where}: a record must be a JSON object with a "text" field')
    text_field = next((name for name in TEXT_FIELDS if name in record), None)
    if text_field is None:
        raise CorpusError(f'{source} {where}: record has no "text" field; add one (or "content"/"body")')
    text = record[text_field]
    if not isinstance(text, str):
        raise CorpusError(f'{source} {where}: "{text_field}" must be a string')
    if not text.strip():
        return None
    id_field = next((name for name in ID_FIELDS if record.get(name) not in (None, "")), None)
    title = record.get("title")
    nested = record.get("metadata")
    extra = dict(nested) if isinstance(nested, dict) else {}
    extra.update(
        (key, value)
        for key, value in record.items()
        if key not in {text_field, "title", *ID_FIELDS} and not (key == "metadata" and isinstance(value, dict))
    )
    metadata = {
        key: value
        if isinstance(value, str | int | float | bool) or value is None
        else json.dumps(value, ensure_ascii=False)
        for key, value in extra.items()
    }
    return Document(
        doc_id=str(record[id_field]) if id_field else default_id,
        title=str(title) if title is not None else "",
        source=source,
        text=text,
        metadata=metadata,
    )
