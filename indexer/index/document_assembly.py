"""Whole documents put back together from their chunks, the last few kept for repeated calls."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from .chunk_reader import ChunkReader
from .document_lines import DocumentLines
from .ids import chunk_id, parse_chunk_id

DOCUMENTS_KEPT = 8


@dataclass(frozen=True)
class DocumentAssembler:
    """Documents as numbered lines, by reference: find and open read one document many times."""

    chunks: ChunkReader
    _kept: OrderedDict[str, DocumentLines] = field(default_factory=OrderedDict, repr=False, compare=False)

    def get(self, ref: str) -> DocumentLines | None:
        """The document a reference names (its key, or the id of any of its chunks), as numbered
        lines; None when there is no such document."""
        key = ref.strip()
        parsed = parse_chunk_id(key)
        if parsed:
            key = parsed[0]
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
        return document
