"""Reading chunks' texts from the chunks table: their headers are held in the catalogue."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .catalogue import ChunkCatalogue
from .chunks import Chunk
from .ids import parse_chunk_id
from .mirror import Mirror
from .reading import read
from .schema import CHUNKS, ChunkColumn

C = ChunkColumn
TEXT_FIELDS = [C.TEXT, C.SENTENCE_STARTS, C.SENTENCE_ENDS]
"""What a chunk row adds to its header (held in the catalogue) to make a `Chunk`."""


@dataclass(frozen=True)
class ChunkReader:
    """Whole chunks, and chunk texts alone, by chunk id or chunk number: from the build's mirror
    where it has one (mirror.py), else from the chunks table."""

    uri: str
    open_table: Callable[[], Any]
    """The chunks table (opened when first needed: not at all where the mirror answers)."""
    catalogue: ChunkCatalogue
    mirror: Mirror | None = None

    @property
    def table(self) -> Any:
        return self.open_table()

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
        if self.mirror is not None:
            texts = self.mirror.texts
            rows = [(texts.text(number), texts.sentence_spans(number)) for number in numbers.tolist()]
        else:
            table = self._rows_at(numbers, TEXT_FIELDS)
            numbers = table["number"].to_numpy()
            rows = [
                (row[C.TEXT], tuple(zip(row[C.SENTENCE_STARTS] or [], row[C.SENTENCE_ENDS] or [])))
                for row in table.to_pylist()
            ]
        return {
            int(number): Chunk(**vars(header), text=text, sentence_spans=spans)
            for number, header, (text, spans) in zip(numbers, self.catalogue.headers_at(numbers), rows)
        }

    def texts_at(self, numbers: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """(chunk numbers, texts) of these chunks, in no particular order: the texts alone."""
        numbers = np.unique(np.asarray(numbers, dtype=np.int64))
        if self.mirror is not None:
            return numbers, self.mirror.texts.texts(numbers)
        table = self._rows_at(numbers, [C.TEXT])
        return table["number"].to_numpy(), table[C.TEXT].combine_chunks()

    def _rows_at(self, numbers: np.ndarray, columns: Sequence[str]) -> pa.Table:
        """These chunks' rows of `columns` from the chunks table, with their `number`, by number."""
        if not len(numbers):
            schema = pa.schema([*(self.table.schema.field(c) for c in columns), pa.field("number", pa.int64())])
            return schema.empty_table()
        row_ids = self.catalogue.row_ids[numbers]
        rows = self.table.take_row_ids(row_ids.tolist()).select(list(columns)).with_row_id()
        table = read(self.uri, CHUNKS, rows.to_arrow)
        found = np.searchsorted(self.catalogue.row_ids, table["_rowid"].to_numpy())
        table = table.drop_columns(["_rowid"]).append_column("number", pa.array(found, pa.int64()))
        return table.take(pc.sort_indices(table["number"]))
