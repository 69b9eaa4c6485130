"""Reading chunks' texts from the keyword segments: their headers are held in the catalogue.

A segment's texts file that was cut short or written over is refused (segments.SegmentChanged);
the chunks table holds the same texts, so a chunk read then goes to the table: semantic search
and chunk_read keep answering while keyword search says to sync."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .catalogue import ChunkCatalogue
from .chunks import Chunk
from .ids import parse_chunk_id
from .keywords import SegmentChanged, SegmentSet
from .reading import read, scan, sql_lists
from .schema import CHUNKS, ChunkColumn

TABLE_COLUMNS = (ChunkColumn.ID, ChunkColumn.TEXT, ChunkColumn.SENTENCE_STARTS, ChunkColumn.SENTENCE_ENDS)
log = logging.getLogger(__name__)
_told: set[str] = set()
"""The refusals already logged: a server reading from the table call after call says so once."""


@dataclass(frozen=True)
class ChunkReader:
    """Whole chunks, and chunk texts alone, by chunk id or chunk number, from the texts of
    the build's segments (segment_set.py), or from the chunks table where those are refused."""

    segments: SegmentSet
    open_table: Callable[[], Any]
    """The chunks table (LanceDB), opened when first asked for."""
    uri: str

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
        headers = self.catalogue.headers_at(numbers)
        segments = self.segments
        try:
            rows = [(segments.text(number), segments.sentence_spans(number)) for number in numbers.tolist()]
        except SegmentChanged as exc:
            stored = self._from_table([header.chunk_id for header in headers], exc)
            rows = [stored[header.chunk_id] for header in headers]
        return {
            int(number): Chunk(**vars(header), text=text, sentence_spans=spans)
            for number, header, (text, spans) in zip(numbers, headers, rows)
        }

    def texts_at(self, numbers: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """(chunk numbers, texts) of these chunks, in no particular order: the texts alone."""
        numbers = np.unique(np.asarray(numbers, dtype=np.int64))
        try:
            return numbers, self.segments.texts(numbers)
        except SegmentChanged as exc:
            ids = self.catalogue.ids()[numbers].tolist()
            stored = self._from_table(ids, exc)
            return numbers, pa.array([stored[chunk_id][0] for chunk_id in ids], pa.string())

    def _from_table(
        self, chunk_ids: Sequence[str], refused: SegmentChanged
    ) -> dict[str, tuple[str, tuple[tuple[int, int], ...]]]:
        """Chunk id → (text, sentence spans), read from the chunks table."""
        if str(refused) not in _told:
            _told.add(str(refused))
            log.warning("%s; reading chunk texts from the chunks table meanwhile", refused)

        def fetch() -> pa.Table:
            parts = [
                scan(self.table.search().where(f"{ChunkColumn.ID} IN ({ids})").select(list(TABLE_COLUMNS))).read_all()
                for ids in sql_lists(list(chunk_ids))
            ]
            return pa.concat_tables(parts) if parts else pa.table({c: [] for c in TABLE_COLUMNS})

        rows = read(self.uri, CHUNKS, fetch).to_pylist()
        return {
            row[ChunkColumn.ID]: (
                row[ChunkColumn.TEXT] or "",
                tuple(zip(row[ChunkColumn.SENTENCE_STARTS] or (), row[ChunkColumn.SENTENCE_ENDS] or ())),
            )
            for row in rows
        }
