"""Read sources (files and folders) into documents.

Formats: plain text (`.txt`), Markdown (`.md`, `.markdown`), reStructuredText (`.rst`), HTML
(`.html`, `.htm`, visible text only), PDF (`.pdf`, text via pypdf), `.json` (a list of records, an
object holding one list of records, or one record) and `.jsonl` (one record a line, streamed).

A record is ``{"text": ..., "title"?: ..., "id"?: ..., ...}``: "contents", "content" or "body"
stand in for a missing "text" and "_id" for a missing "id"; every other field (and each field of a
nested "metadata" object) is kept as metadata. Records with empty text are skipped silently.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import BinaryIO

import regex

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | {".json", ".jsonl", ".pdf"}
TEXT_FIELDS = ("text", "contents", "content", "body")
ID_FIELDS = ("id", "_id")
BINARY_SNIFF_BYTES = 8192
Metadata = dict[str, str | int | float | bool | None]


class CorpusError(Exception):
    """A user error in the corpus; the one-line message names the file (and line) and the fix."""


@dataclass(frozen=True)
class Document:
    """One document to index.

    doc_id: the record's "id" (else "_id"); for a whole file its source; for an id-less record
    "<source>:<line>" (JSONL) or "<source>#<index>" (JSON). title: the record's "title" (else "");
    for a file its first heading, HTML or PDF title, else the file stem. source: the path as given,
    or for a folder's files "<folder name>/<path inside it>", with POSIX separators. metadata: the
    record's other fields (non-scalars JSON-encoded); {} for files.
    """

    doc_id: str
    title: str
    source: str
    text: str
    metadata: Metadata = field(default_factory=dict)


@dataclass
class SkippedFile:
    path: str
    reason: str  # "empty", "binary", "unreadable: <error>", "unsupported extension .xyz"


class _Skip(Exception):
    """Why a file yields no document; becomes a SkippedFile."""


def iter_documents(
    sources: Sequence[str | Path], skipped: list[SkippedFile], exclude: Sequence[str | Path] = ()
) -> Iterator[Document]:
    """Documents from files and folders, appending files that yield nothing to `skipped`.

    Folders are read recursively in sorted order; hidden files and folders, files with unsupported
    extensions and anything under an `exclude` path are passed over silently. A missing source or
    malformed JSON/JSONL raises CorpusError.
    """
    excluded = [Path(path).resolve() for path in exclude]
    for source in sources:
        root = Path(source).expanduser()
        if not root.exists():
            raise CorpusError(f"{source}: no such file or folder; check the path")
        if root.is_dir():
            for path in _walk(root, excluded, skipped):
                yield from _read_file(path, _display(path, root), skipped)
        elif root.suffix.lower() in SUPPORTED_SUFFIXES:
            yield from _read_file(root, root.as_posix(), skipped)
        else:
            skipped.append(SkippedFile(root.as_posix(), f"unsupported extension {root.suffix or '(none)'}"))


def _walk(root: Path, excluded: list[Path], skipped: list[SkippedFile]) -> list[Path]:
    """Supported, visible files under `root`, sorted by path; unreadable folders are listed as skipped."""

    def unreadable(error: OSError) -> None:
        skipped.append(SkippedFile(_display(Path(error.filename), root), f"unreadable: {error.strerror}"))

    found: list[Path] = []
    for folder, folders, files in os.walk(root, onerror=unreadable):
        here = Path(folder)
        folders[:] = [name for name in folders if _wanted(here / name, excluded)]
        found.extend(
            here / name
            for name in files
            if Path(name).suffix.lower() in SUPPORTED_SUFFIXES and _wanted(here / name, excluded)
        )
    return sorted(found)


def _wanted(path: Path, excluded: list[Path]) -> bool:
    if path.name.startswith("."):
        return False
    resolved = path.resolve()
    return not any(resolved.is_relative_to(folder) for folder in excluded)


def _display(path: Path, root: Path) -> str:
    """A folder's files are named from the folder itself: `docs/guide/intro.md`."""
    return (Path(root.resolve().name) / path.relative_to(root)).as_posix()


def _read_file(path: Path, source: str, skipped: list[SkippedFile]) -> Iterator[Document]:
    """The documents of one file; a file that yields none is listed in `skipped`."""
    count = 0
    try:
        for document in _file_documents(path, source):
            count += 1
            yield document
    except _Skip as reason:
        skipped.append(SkippedFile(source, str(reason)))
        return
    if not count:
        skipped.append(SkippedFile(source, "empty"))


def _file_documents(path: Path, source: str) -> Iterable[Document]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _read_jsonl(path, source)
    if suffix == ".json":
        return _read_json(path, source)
    if suffix == ".pdf":
        title, text = _read_pdf(path)
    elif suffix in HTML_SUFFIXES:
        title, text = html_to_text(_decode(_read_text_bytes(path)))
    else:
        text = _decode(_read_text_bytes(path))
        title = "" if suffix == ".txt" else _heading(text)
    return [Document(source, title or path.stem, source, text)] if text.strip() else []


def _read_text_bytes(path: Path) -> bytes:
    """The bytes of a text-type file; unreadable or binary files are skipped."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise _Skip(f"unreadable: {error.strerror or error}") from None
    _check_not_binary(raw)
    return raw


def _check_not_binary(start: bytes) -> None:
    if b"\x00" in start[:BINARY_SNIFF_BYTES]:
        raise _Skip("binary")


def _decode(raw: bytes) -> str:
    """UTF-8 (with or without a byte-order mark), else latin-1."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


_FRONT_MATTER = regex.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*$", regex.S | regex.M)
_MARKDOWN_HEADING = regex.compile(r"^#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", regex.M)
_UNDERLINED_HEADING = regex.compile(r"^(\S[^\n]*)\n([=\-~^`'\"*+#:.])\2{2,}[ \t]*$", regex.M)


def _heading(text: str) -> str:
    """The first Markdown (`# Title`) or underlined (reStructuredText, Markdown setext) heading, if any."""
    body = _FRONT_MATTER.sub("", text, count=1)
    found = [match for match in (_MARKDOWN_HEADING.search(body), _UNDERLINED_HEADING.search(body)) if match]
    return min(found, key=lambda match: match.start()).group(1).strip() if found else ""


def _read_pdf(path: Path) -> tuple[str, str]:
    """(title, text) of a PDF, pages separated by blank lines."""
    from pypdf import PasswordType, PdfReader

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise _Skip("unreadable: encrypted PDF needs a password")
        pages = ((page.extract_text() or "").strip() for page in reader.pages)
        text = "\n\n".join(page for page in pages if page)
        title = (reader.metadata.title if reader.metadata else None) or ""
    except _Skip:
        raise
    except Exception as error:  # pypdf raises many exception types on damaged files; one bad PDF must not stop a build
        raise _Skip(f"unreadable: {type(error).__name__}: {error}") from None
    return str(title).strip(), text


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, with block elements as paragraph breaks."""

    PARAGRAPHS = frozenset(
        "p div h1 h2 h3 h4 h5 h6 ul ol dl table section article main aside nav header footer "
        "blockquote pre figure figcaption form fieldset hr address details summary".split()
    )
    LINES = frozenset({"br", "li", "tr", "dt", "dd", "caption"})
    CELLS = frozenset({"td", "th"})
    HIDDEN = frozenset({"head", "title", "script", "style", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.headings = {"title": "", "h1": ""}
        self._capturing: str | None = None
        self._hidden = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self._hidden = 0  # an unclosed <head> ends where the body starts
        elif tag in self.HIDDEN:
            self._hidden += 1
        if tag in self.headings and not self.headings[tag]:
            self._capturing = tag
        if tag == "pre":
            self._pre += 1
        self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self._hidden = max(self._hidden - 1, 0)
        if tag == self._capturing:
            self._capturing = None
        if tag == "pre":
            self._pre = max(self._pre - 1, 0)
        if tag in self.PARAGRAPHS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._capturing:
            self.headings[self._capturing] += data
        if not self._hidden:
            self.parts.append(data if self._pre else regex.sub(r"\s+", " ", data))

    def _break(self, tag: str) -> None:
        """Paragraph, line or cell separation where an element starts."""
        if tag in self.PARAGRAPHS:
            self.parts.append("\n\n")
        elif tag in self.LINES:
            self.parts.append("\n")
        elif tag in self.CELLS:
            self.parts.append(" ")


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page: title from `<title>` else the first `<h1>`; visible text only.

    Whitespace is collapsed as a browser does; inside `<pre>` line breaks are kept (indentation is not).
    """
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    text = regex.sub(r"[ \t]*\n[ \t]*", "\n", "".join(parser.parts))
    text = regex.sub(r"\n{3,}", "\n\n", regex.sub(r"[ \t]{2,}", " ", text)).strip()
    title = parser.headings["title"] or parser.headings["h1"]
    return " ".join(title.split()), text


def _read_json(path: Path, source: str) -> Iterator[Document]:
    raw = _read_text_bytes(path)
    try:
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise CorpusError(f"{source} line {line}: not UTF-8 text; save the file as UTF-8") from None
    if not content.strip():
        return
    try:
        data = json.loads(content)
    except json.JSONDecodeError as error:
        raise CorpusError(
            f"{source} line {error.lineno}: invalid JSON ({error.msg}: column {error.colno}); fix the file"
        ) from None
    for index, record in enumerate(_record_list(data, source)):
        document = _record(record, source, f"{source}#{index}", f"item {index}")
        if document:
            yield document


def _record_list(data: object, source: str) -> list[object]:
    """The records of a `.json` file: a list, the one list inside an object, or a single record."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if any(name in data for name in TEXT_FIELDS):
            return [data]
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) == 1:
            return lists[0]
    raise CorpusError(
        f'{source}: expected a list of records like [{{"text": ...}}], an object holding one such list, or one record; restructure the file'
    )


def _read_jsonl(path: Path, source: str) -> Iterator[Document]:
    """Records of a JSON Lines file, read one line at a time."""
    with _open_binary(path) as handle:
        _check_not_binary(handle.read(BINARY_SNIFF_BYTES))
        handle.seek(0)
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise CorpusError(f"{source} line {number}: not UTF-8 text; save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise CorpusError(
                    f"{source} line {number}: invalid JSON ({error.msg}: column {error.colno}); fix the line or remove it"
                ) from None
            document = _record(record, source, f"{source}:{number}", f"line {number}")
            if document:
                yield document


def _open_binary(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except OSError as error:
        raise _Skip(f"unreadable: {error.strerror or error}") from None


def _record(record: object, source: str, default_id: str, where: str) -> Document | None:
    """One record as a document; None when its text is empty."""
    if not isinstance(record, dict):
        raise CorpusError(f'{source} {where}: a record must be a JSON object like {{"text": ...}}; fix or remove it')
    text_field = next((name for name in TEXT_FIELDS if name in record), None)
    if text_field is None:
        raise CorpusError(f'{source} {where}: record has no "text" field; add one (or "content"/"body")')
    text = record[text_field]
    if not isinstance(text, str):
        raise CorpusError(f'{source} {where}: "{text_field}" must be a string; quote it or fix the record')
    if not text.strip():
        return None
    id_field = next((name for name in ID_FIELDS if record.get(name) not in (None, "")), None)
    title = record.get("title")
    return Document(
        doc_id=str(record[id_field]) if id_field else default_id,
        title=str(title) if title is not None else "",
        source=source,
        text=text,
        metadata=_metadata(record, {text_field, "title", *ID_FIELDS}),
    )


def _metadata(record: dict[str, object], used: set[str]) -> Metadata:
    """The record's other fields, a nested "metadata" object flattened in; non-scalars JSON-encoded."""
    nested = record.get("metadata")
    fields = dict(nested) if isinstance(nested, dict) else {}
    fields.update(
        (key, value)
        for key, value in record.items()
        if key not in used and not (key == "metadata" and isinstance(value, dict))
    )
    return {
        key: value
        if value is None or isinstance(value, str | int | float | bool)
        else json.dumps(value, ensure_ascii=False)
        for key, value in fields.items()
    }
