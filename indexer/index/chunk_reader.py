"""Reading chunks' texts from the keyword segments: their headers are held in the catalogue."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .catalogue import ChunkCatalogue
from .chunks import Chunk
from .ids import parse_chunk_id
from .segment_set import SegmentSet


@dataclass(frozen=True)
class ChunkReader:
    """Whole chunks, and chunk texts alone, by chunk id or chunk number, from the texts of
    the build's segments (segment_set.py)."""

    segments: SegmentSet
    open_table: Callable[[], Any]
    """The chunks table (LanceDB), opened when first asked for."""

    @property
    def table(self) -> Any:
        return self.open_table()

    @property
    def catalogue(self) -> ChunkCatalogue:
        return self.segments.catalogue

    def by_id(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks with these ids, keyed by id (unknown or malformed ids are absent)."""
        wanted = [cid for cid in chunk_ids if parse_chunk_id(cid)]
        if not wanted:
            return {}
        return {chunk.chunk_id: chunk for chunk in self.at(self.catalogue.numbers_of(wanted)).values()}

    def at(self, numbers: np.ndarray) -> dict[int, Chunk]:
        """The chunks with these chunk numbers, keyed by number: their headers from the catalogue,
        their texts read."""
        numbers = np.unique(np.asarray(numbers, dtype=np.int64))
        segments = self.segments
        rows = [(segments.text(number), segments.sentence_spans(number)) for number in numbers.tolist()]
        return {
            int(number): Chunk(**vars(header), text=text, sentence_spans=spans)
            for number, header, (text, spans) in zip(numbers, self.catalogue.headers_at(numbers), rows)
        }

    def texts_at(self, numbers: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """(chunk numbers, texts) of these chunks, in no particular order: the texts alone."""
        numbers = np.unique(np.asarray(numbers, dtype=np.int64))
        return numbers, self.segments.texts(numbers)
