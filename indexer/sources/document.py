"""What reading a file gives: documents, the files skipped and why, and the file being read.

Every format's reader (formats.py) takes a `FileInput` and yields `Document`s; what it cannot read
it raises as `Skip`, or, for one bad record among good ones, appends to the build's skipped list.
"""

from __future__ import annotations

import errno
import io
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from .outline import HeadingMarks, PageMarks, composed

BINARY_SNIFF_CHARS = 8192
CONTROL_SHARE = 0.05
"""Above this share of control characters (other than whitespace) in a file's start, it is not text."""
Metadata = dict[str, str | int | float | bool | None]
SentenceMarks = tuple[tuple[int, int], ...]
"""(start, end) of each sentence, where a reader knows them better than prose rules do (lines of
code, rows of a table): in offset order, not overlapping, each stripped of surrounding whitespace."""


class CorpusError(Exception):
    """A user error in the corpus; the one-line message names the file (and line) and the fix."""


class Skip(Exception):
    """Why a file (or a record) yields no document; becomes a SkippedFile."""


@dataclass(frozen=True)
class Document:
    """One document to index.

    doc_id: the record's "id" (else "_id"); for a whole file its resolved path (POSIX separators),
    so that the same file has one id however it was named; for an id-less record "<path>:<line>"
    (JSONL), "<path>#<index>" (JSON) or "<path>:<row>" (CSV). title: the record's "title" (else
    ""); for a file its first heading (a Markdown front matter's title first), HTML, PDF or DOCX
    title, else the file stem. source: what models are shown, never an absolute path: a folder's
    files as "<folder name>/<path inside it>", a file given alone by its name. path: the resolved
    path of the file read. metadata: the record's other fields, or a Markdown file's front matter
    (non-scalars JSON-encoded). headings, pages: where the file's sections and pages begin in
    `text`. sentences: the reader's own sentence spans (code), else () for the prose rules.
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
    sentences: SentenceMarks = ()


INDEXED = "indexed, "
"""Begins the reason of a line about a file that was indexed all the same ("indexed, front matter
kept as text: ..."): told as skips are, as the build meets it, but not counted as one."""
LEFT_OUT = "left out, "
"""Begins the reason of a line about a path a folder's own rules leave out (its `.gitignore`, a
build folder): told as the build meets it and summed up, but neither a failure under --strict nor
a file whose documents are kept."""
_WHERE = re.compile(r"^(?:line|item|row) [\d,]+: ")
_KIND_END = re.compile(r"[:;(]| \d")


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

    @property
    def left_out(self) -> bool:
        """A path the folder's own rules leave out (LEFT_OUT), not a skip."""
        return self.reason.startswith(LEFT_OUT)

    @property
    def counted(self) -> bool:
        """A skip proper, counted as one: neither a notice about a file indexed all the same nor a
        path left out."""
        return not (self.indexed or self.left_out)

    @property
    def kind(self) -> str:
        """The reason without its particulars, for the summary by reason ("unreadable", "binary",
        "invalid JSON", "unsupported type .png", "left out, ignored by .gitignore")."""
        reason = _WHERE.sub("", self.reason)
        if reason.startswith("unsupported type"):
            return reason
        prefix = LEFT_OUT if reason.startswith(LEFT_OUT) else ""
        rest = reason[len(prefix) :]
        cut = _KIND_END.search(rest)
        return prefix + (rest[: cut.start()] if cut else rest).strip()


@dataclass(frozen=True)
class FileInput:
    """One file for a reader: where it lies, the names it goes by, and its bytes. A compressed
    file is read as the file inside: `name` is the inner name (``page.md`` for ``page.md.gz``) and
    `data` its content, already decompressed within its cap."""

    path: Path
    """The file on disk."""
    name: str
    """The name whose suffix chose the reader."""
    source: str
    """The source name documents show (`Document.source`)."""
    file: str
    """The resolved path (`Document.path`, the id of a whole file)."""
    data: bytes | None = None
    plain_text: bool = False
    """Read as plain text where no reader knows its suffix: the user named it with `--include`."""

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.name).suffix.lower()

    @property
    def stem(self) -> str:
        return PurePosixPath(self.name).stem

    @property
    def local_path(self) -> Path | None:
        """The file on disk where its bytes are read from there (not decompressed), for libraries that read by path."""
        return self.path if self.data is None else None

    def read_bytes(self) -> bytes:
        """The file's bytes; an unreadable file is skipped."""
        if self.data is not None:
            return self.data
        try:
            return self.path.read_bytes()
        except OSError as error:
            raise Skip(f"unreadable: {error_text(error)}") from None

    def open(self) -> BinaryIO:
        """The file's bytes as a stream (a large file is not read whole); an unreadable file is skipped."""
        if self.data is not None:
            return io.BytesIO(self.data)
        try:
            return self.path.open("rb")
        except OSError as error:
            raise Skip(f"unreadable: {error_text(error)}") from None

    def text(self) -> str:
        """The file's text: `decode`d, binary content skipped."""
        return decode(self.read_bytes())


def error_text(error: BaseException) -> str:
    if isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP:
        return "symbolic link loop"
    return getattr(error, "strerror", None) or str(error)


def decode(raw: bytes) -> str:
    """UTF-8 (with or without a byte-order mark), else latin-1, composed (NFC); content that is not
    text is skipped."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    check_text(text[:BINARY_SNIFF_CHARS])
    return composed(text)


def check_text(start: str) -> None:
    """Binary content is told by NUL bytes or by many control characters, whatever the file's name."""
    controls = sum(1 for char in start if char < " " and char not in "\t\n\r\f\v" or "\x7f" <= char <= "\x9f")
    if "\x00" in start or controls > CONTROL_SHARE * len(start):
        raise Skip("binary (not text)")


def whole_file(input: FileInput, title: str, text: str, **marks: object) -> list[Document]:
    """The one document of a file read whole (none where its text is blank), titled by `title` or
    else the file's stem."""
    if not text.strip():
        return []
    return [Document(input.file, title or input.stem, input.source, text, path=input.file, **marks)]  # type: ignore[arg-type]
