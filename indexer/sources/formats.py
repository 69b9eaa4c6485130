"""Which reader reads a file: one per format, chosen by the file's suffix.

Each reader takes a `FileInput` and gives the file's documents (document.py). A suffix not listed
here is read as plain text where its content is text and its name is one that text files go by
(no suffix, as README and NEWS have, or one of TEXT_LIKE_SUFFIXES), or where the user opted it in
with `--include`; other suffixes are skipped as unsupported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .document import Document, FileInput, Skip, SkippedFile, whole_file
from .docx import docx_text
from .html import html_to_text
from .outline import BlockText, NotReadable
from .pdf import pdf_text
from .records import read_json, read_jsonl
from .text_files import read_markdown, read_plain, read_rst

Reader = Callable[[FileInput, list[SkippedFile]], Iterable[Document]]


def _structured(read: Callable[[FileInput], tuple[str, BlockText]]) -> Reader:
    """A reader of a format a library parses (HTML, PDF, DOCX) into a title and marked text."""

    def reader(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
        try:
            title, blocks = read(input)
        except (Skip, MemoryError):
            raise
        except NotReadable as error:
            raise Skip(f"unreadable: {error}") from None
        except (
            Exception
        ) as error:  # the libraries raise many exception types on damaged files; one must not stop a build
            raise Skip(f"unreadable: {type(error).__name__}: {error}") from None
        return whole_file(input, title, blocks.text, headings=blocks.headings, pages=blocks.pages)

    return reader


READERS: dict[str, Reader] = {
    ".txt": read_plain,
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".rst": read_rst,
    ".html": _structured(lambda input: html_to_text(input.text())),
    ".htm": _structured(lambda input: html_to_text(input.text())),
    ".pdf": _structured(lambda input: pdf_text(input.local_path or input.open())),
    ".docx": _structured(lambda input: docx_text(input.local_path or input.open())),
    ".json": read_json,
    ".jsonl": read_jsonl,
}
SUPPORTED_SUFFIXES = frozenset(READERS)
FILE_TYPES = {".markdown": "md", ".htm": "html"}
"""Suffixes whose file type is not the suffix itself: a type names the reader, not the spelling."""


def reader_for(input: FileInput) -> Reader:
    """The reader of a file; Skip for a type no reader reads."""
    reader = READERS.get(input.suffix)
    if reader is None:
        raise Skip(f"unsupported type {input.suffix or '(no extension)'}")
    return reader
