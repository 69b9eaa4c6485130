"""A document as numbered lines, reassembled from its chunks (no text is stored twice).

Chunks are consecutive sentence-aligned slices of their document; joined in order, one chunk to a
new line, they give the document's text. Lines are that text's lines, with any line longer than
LINE_CHARS wrapped at the last space before the limit (a hard cut where there is none), so that a
passage stored as one 300,000-character line still reads as a few hundred lines. Source code and
configuration (file_types.LINE_LAID_TYPES) wrap only past CODE_LINE_CHARS, so that their lines are
numbered as the file numbers them. The numbering
depends on the document's chunks alone: it is the same in every call while the document is
unchanged, and a line number seen in one tool's answer can be opened in another's.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arag_mcp.indexer.file_types import LINE_LAID_TYPES

if TYPE_CHECKING:
    from .chunks import Chunk

LINE_CHARS = 200
CODE_LINE_CHARS = 4000
"""A line of code is wrapped only past this (a generated or data line the reader let through)."""


@dataclass(frozen=True)
class DocumentLines:
    doc_key: str
    doc_id: str
    title: str
    source: str
    metadata: dict[str, Any]
    lines: list[str]
    chunk_ids: list[str]
    """The document's chunks in order."""
    chunk_first_lines: list[int]
    """The line each chunk starts on (chunk i covers lines chunk_first_lines[i] .. the next one's - 1)."""
    line_offsets: list[int]
    """Each line's character offset in its chunk's text."""

    @classmethod
    def from_chunks(cls, doc_key: str, chunks: Sequence[Chunk]) -> DocumentLines:
        lines: list[str] = []
        first_lines: list[int] = []
        offsets: list[int] = []
        for chunk in chunks:
            first_lines.append(len(lines))
            offset = 0
            width = CODE_LINE_CHARS if chunk.file_type in LINE_LAID_TYPES else LINE_CHARS
            for raw in chunk.text.split("\n"):
                for start, piece in wrap(raw, width):
                    lines.append(piece)
                    offsets.append(offset + start)
                offset += len(raw) + 1
        head = chunks[0]
        return cls(
            doc_key,
            head.doc_id,
            head.title,
            head.source,
            head.metadata,
            lines,
            [chunk.chunk_id for chunk in chunks],
            first_lines,
            offsets,
        )

    def chunk_lines(self, index: int) -> range:
        """The lines of the document's `index`-th chunk."""
        end = self.chunk_first_lines[index + 1] if index + 1 < len(self.chunk_ids) else len(self.lines)
        return range(self.chunk_first_lines[index], end)

    def line_at(self, chunk_index: int, offset: int) -> int:
        """The line holding character `offset` of the `chunk_index`-th chunk's text."""
        lines = self.chunk_lines(chunk_index)
        at = bisect.bisect_right(self.line_offsets, offset, lines.start, lines.stop) - 1
        return max(at, lines.start)


def wrap(line: str, width: int = LINE_CHARS) -> list[tuple[int, str]]:
    """(offset, piece) of `line` cut into pieces of at most `width` characters, at a space where
    one is near the limit; the pieces concatenated give the line back."""
    if len(line) <= width:
        return [(0, line)]
    pieces = []
    start = 0
    while len(line) - start > width:
        cut = line.rfind(" ", start + width // 2, start + width)
        end = cut + 1 if cut > start else start + width
        pieces.append((start, line[start:end]))
        start = end
    pieces.append((start, line[start:]))
    return pieces
