"""Where a document's sections and pages begin: marks at character offsets of its text.

Readers that see a document's structure (HTML, DOCX, PDF, reStructuredText, AsciiDoc, Org and
notebooks) build its text block by block with `BlockText`, which records each heading's path and
each page's number at the offset where they begin; Markdown, read as it is, is marked by
`headings.py`, and code by its definitions (code.py). A chunk
takes the heading path in force at its first character and the pages of its first and last.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ..normal_forms import normalized

HeadingMarks = tuple[tuple[int, tuple[str, ...]], ...]
"""(offset, heading path) where each section begins, in offset order."""
PageMarks = tuple[tuple[int, int], ...]
"""(offset, page from 1) where each page begins, in offset order."""


def composed(text: str) -> str:
    """`text` in Unicode's composed form (NFC): macOS and some converters write "が" as "か" and a
    combining voicing mark, which words, keywords and search compare as one letter only once composed."""
    return text if text.isascii() else normalized("NFC", text)


class NotReadable(Exception):
    """A file its reader cannot read; the message says why, in a few words."""


def mark_at(marks: Sequence[tuple[int, object]], offset: int) -> object | None:
    """The value of the last mark at or before `offset` (None before the first)."""
    at = bisect.bisect_right(marks, offset, key=lambda mark: mark[0]) - 1
    return marks[at][1] if at >= 0 else None


def heading_path(marks: HeadingMarks, offset: int) -> tuple[str, ...]:
    found = mark_at(marks, offset)
    return found if isinstance(found, tuple) else ()


def page_range(marks: PageMarks, start: int, end: int) -> tuple[int, int] | None:
    """(first, last) page of text[start:end]; None for a document without pages."""
    first, last = mark_at(marks, start), mark_at(marks, max(start, end - 1))
    return (first, last) if isinstance(first, int) and isinstance(last, int) else None


class HeadingStack:
    """The path of headings above the current point: a heading of level n replaces those of
    level n and below (levels may skip: h1 then h3 gives a path of two)."""

    def __init__(self) -> None:
        self._levels: list[tuple[int, str]] = []

    def enter(self, level: int, title: str) -> tuple[str, ...]:
        self._levels = [(depth, name) for depth, name in self._levels if depth < level]
        self._levels.append((level, title))
        return tuple(name for _, name in self._levels)


class BlockText:
    """A document's text built from blocks (paragraphs, headings, code, list items, table rows),
    separated by blank lines, with its heading and page marks."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._headings: list[tuple[int, tuple[str, ...]]] = []
        self._pages: list[tuple[int, int]] = []
        self._stack = HeadingStack()
        self._group: object = None

    def add(self, block: str, group: object = None) -> None:
        """A block of text, kept as given (surrounding blank lines removed); empty blocks are
        dropped. Blocks of one `group` (the items of a list, the rows of a table) are lines of one
        paragraph."""
        block = composed(block.strip("\n").rstrip())
        if not block.strip():
            return
        if self._parts:
            separator = "\n" if group is not None and group == self._group else "\n\n"
            self._parts.append(separator)
            self._length += len(separator)
        self._parts.append(block)
        self._length += len(block)
        self._group = group

    def heading(self, level: int, title: str) -> None:
        """A heading: its own block, and the start of its section."""
        title = composed(" ".join(title.split()))
        if not title:
            return
        path = self._stack.enter(level, title)
        self._headings.append((self._next_offset(), path))
        self.add(title)

    def page(self, page: int) -> None:
        """What follows is on page `page` (from 1)."""
        self._pages.append((self._next_offset(), page))

    def _next_offset(self) -> int:
        return self._length + 2 if self._parts else 0

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def headings(self) -> HeadingMarks:
        return tuple(self._headings)

    @property
    def pages(self) -> PageMarks:
        return tuple(self._pages)
