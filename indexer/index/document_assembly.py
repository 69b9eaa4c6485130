"""Whole documents put back together from their chunks, the last few kept for repeated calls."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from .chunk_reader import ChunkReader
from .document_lines import DocumentLines
from .ids import chunk_id, parse_chunk_id

DOCUMENTS_KEPT = 8
LINE_COUNTS_KEPT = 4096
"""Documents whose line count is kept (a search names the length of every result's document)."""


@dataclass(frozen=True)
class DocumentAssembler:
    """Documents as numbered lines, by reference: find and open read one document many times."""

    chunks: ChunkReader
    _kept: OrderedDict[str, DocumentLines] = field(default_factory=OrderedDict, repr=False, compare=False)
    _line_counts: OrderedDict[str, int] = field(default_factory=OrderedDict, repr=False, compare=False)

    def line_count(self, ref: str) -> int | None:
        """How many lines the document a reference names has (as `get` numbers them), without
        assembling it again while its count is kept; None when there is no such document."""
        key = _key(ref)
        if key in self._line_counts:
            self._line_counts.move_to_end(key)
            return self._line_counts[key]
        document = self.get(key)
        return None if document is None else len(document.lines)

    def get(self, ref: str) -> DocumentLines | None:
        """The document a reference names (its key, or the id of any of its chunks), as numbered
        lines; None when there is no such document."""
        key = _key(ref)
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        head = self.chunks.by_id([chunk_id(key, 0)]).get(chunk_id(key, 0))
        if head is None:
            return None
        rest = self.chunks.by_id([chunk_id(key, part) for part in range(1, head.parts)])
        chunks = [head, *(rest[chunk_id(key, part)] for part in range(1, head.parts))]
        document = self._kept[key] = DocumentLines.from_chunks(key, chunks)
        while len(self._kept) > DOCUMENTS_KEPT:
            self._kept.popitem(last=False)
        self._line_counts[key] = len(document.lines)
        while len(self._line_counts) > LINE_COUNTS_KEPT:
            self._line_counts.popitem(last=False)
        return document


def _key(ref: str) -> str:
    """The document key a reference names: the key itself, or the part of a chunk id before '-'."""
    key = ref.strip()
    parsed = parse_chunk_id(key)
    return parsed[0] if parsed else key
