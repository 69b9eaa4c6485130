"""Which reader reads a file: one per format, chosen by the file's suffix.

Each reader takes a `FileInput` and gives the file's documents (document.py). A suffix not listed
here is read as plain text where its content is text and its name is one that text files go by
(no suffix, as README and NEWS have, or one of TEXT_LIKE_SUFFIXES), or where the user opted it in
with `--include`; other suffixes are skipped as unsupported. A compressed file (.gz, .bz2, .xz) is
read as the file inside (compressed.py), by that file's reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from .code import CODE_SUFFIXES, read_code
from .compressed import COMPRESSED_SUFFIXES, decompressed, inner_name
from .document import Document, FileInput, Skip, SkippedFile, whole_file
from .docx import docx_text
from .html import html_to_text
from .markup import asciidoc_text, org_text
from .notebooks import read_notebook
from .outline import BlockText, NotReadable
from .pdf import pdf_text
from .records import NotRecords, read_json, read_jsonl
from .rest import read_restructuredtext
from .tables import read_table
from .text_files import read_markdown, read_plain

Reader = Callable[[FileInput, list[SkippedFile]], Iterable[Document]]
READERS_VERSION = 2
"""Raised when a reader reads a format differently (or a new one is added): an index records the
version its files were read with, and a build of another version reads every file again, the
sentences whose text did not change keeping their vectors (changes.py)."""


def _structured(read: Callable[[FileInput], tuple[str, BlockText]]) -> Reader:
    """A reader of a format parsed block by block into a title and marked text (HTML, PDF and DOCX
    by their libraries, AsciiDoc and Org by their heading rules)."""

    def reader(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
        try:
            title, blocks = read(input)
        except (Skip, MemoryError):
            raise
        except NotReadable as error:
            raise Skip(f"unreadable: {error}") from None
        # the libraries raise many exception types on damaged files; one must not stop a build
        except Exception as error:
            raise Skip(f"unreadable: {type(error).__name__}: {error}") from None
        return whole_file(input, title, blocks.text, headings=blocks.headings, pages=blocks.pages)

    return reader


def _json(input: FileInput, skipped: list[SkippedFile]) -> Iterable[Document]:
    """A `.json` file of records as its records; any other (package.json, a configuration) as code."""
    try:
        return list(read_json(input, skipped))
    except NotRecords:
        return read_code(input, skipped)


READERS: dict[str, Reader] = {
    **dict.fromkeys(CODE_SUFFIXES, read_code),
    ".txt": read_plain,
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".rst": read_restructuredtext,
    **dict.fromkeys((".html", ".htm"), _structured(lambda input: html_to_text(input.text()))),
    ".pdf": _structured(lambda input: pdf_text(input.local_path or input.open())),
    ".docx": _structured(lambda input: docx_text(input.local_path or input.open())),
    **dict.fromkeys((".adoc", ".asciidoc"), _structured(lambda input: asciidoc_text(input.text()))),
    ".org": _structured(lambda input: org_text(input.text())),
    ".json": _json,
    ".jsonl": read_jsonl,
    ".ipynb": read_notebook,
    ".csv": read_table,
    ".tsv": read_table,
}
SUPPORTED_SUFFIXES = frozenset(READERS)
TEXT_LIKE_SUFFIXES = frozenset({".text"})
"""Read as plain text: .txt spelled out. Left out: logs (machine output, rewritten while watched, so
each write would be embedded again) and configuration (.conf, .properties): `--include` opts them in."""
TEXT_NAMES = frozenset(
    "readme news changelog changes history install copying copyright license licence authors contributors "
    "contributing thanks todo bugs faq notice".split()
)
"""Names of the text files projects and distributions ship, read as text whatever suffix follows
(`README.Debian`, `changelog.Debian.gz`, `README.customs`)."""
TYPES_READ = (
    f"{' '.join(sorted(SUPPORTED_SUFFIXES | TEXT_LIKE_SUFFIXES))} files, text files without an extension "
    f"(README, NEWS) and any of these compressed ({' '.join(sorted(COMPRESSED_SUFFIXES))})"
)
"""What `arag-index` reads, for its help and messages."""
FILE_TYPES = {".markdown": "md", ".htm": "html", ".asciidoc": "adoc"}
"""Suffixes whose file type is not the suffix itself: a type names the reader, not the spelling."""


def reader_for(input: FileInput) -> Reader:
    """The reader of a file, chosen by its name (`input.plain_text`: the user included it); Skip
    for a type no reader reads."""
    return _reader(input.name, input.plain_text)


UNSUPPORTED = "unsupported type "
"""Begins the reason a file no reader reads is skipped with: a later version that reads it reads
the file again though it is unchanged (changes.py)."""


def may_read(name: str, included: bool = False) -> bool:
    """Whether a file of this name is one `reader_for` reads (its content may still be skipped):
    what a watcher syncs. `included`: the source's --include patterns name it."""
    try:
        _reader(name, included)
    except Skip:
        return False
    return True


def _reader(name: str, plain_text: bool) -> Reader:
    suffix = PurePosixPath(name).suffix.lower()
    reader = READERS.get(suffix)
    if reader is not None:
        return reader
    if suffix in COMPRESSED_SUFFIXES:
        _reader(inner_name(name), plain_text)  # a file inside of no type read is skipped before it is decompressed
        return _read_compressed
    if plain_text or not suffix or suffix in TEXT_LIKE_SUFFIXES or _text_name(name):
        return read_plain
    raise Skip(f"{UNSUPPORTED}{suffix}")


def _text_name(name: str) -> bool:
    """A name that text files go by, whatever follows it: README.Debian, changelog.Debian, NEWS.old."""
    return name.split(".", 1)[0].lower() in TEXT_NAMES


def _read_compressed(input: FileInput, skipped: list[SkippedFile]) -> Iterable[Document]:
    """A compressed file read as the file inside, by its reader."""
    inner = decompressed(input)
    return reader_for(inner)(inner, skipped)
