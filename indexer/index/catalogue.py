"""Every chunk's describing fields, held in memory by chunk number.

A search ranks chunks; showing a ranked chunk takes its id, title, source, place and metadata but
not its text, so these are held here and a search reads no chunk row (chunk_read reads texts).
Chunk numbers are the dense numbering of the live chunks of the index's keyword segments
(segment_set.py), the numbering keyword postings are read in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .chunks import ChunkHeader
from .ids import DOC_KEY_CHARS
from .schema import ChunkColumn

HELD_COLUMNS = (
    ChunkColumn.ID,
    ChunkColumn.DOC_ID,
    ChunkColumn.TITLE,
    ChunkColumn.SOURCE,
    ChunkColumn.PART,
    ChunkColumn.PARTS,
    ChunkColumn.TOKENS,
    ChunkColumn.METADATA,
    ChunkColumn.HEADING_PATH,
    ChunkColumn.FIRST_PAGE,
    ChunkColumn.LAST_PAGE,
    ChunkColumn.FILE_TYPE,
)
"""Chunk columns held in memory, with each chunk's sentence count (derived from its sentence offsets)."""
SENTENCE_COUNT = "sentence_count"
NO_HEADINGS: tuple[str, ...] = ()


class ChunkCatalogue:
    """The held columns of every chunk, by chunk number, with lookup of numbers by chunk id."""

    def __init__(self, numbered: pa.Table, numbers_by_id: np.ndarray | Callable[[], np.ndarray] | None = None) -> None:
        """`numbered`: HELD_COLUMNS and `sentence_count`, one row per chunk, by chunk number;
        `numbers_by_id`: the chunk numbers in sorted id order, or what makes them when first needed
        (None: sorted here)."""
        self.table = numbered.combine_chunks()
        self.chunk_ids: pa.Array = (
            self.table[ChunkColumn.ID].chunk(0) if self.table.num_rows else pa.array([], pa.string())
        )
        self.titles: pa.Array = pc.fill_null(self.table[ChunkColumn.TITLE], "").combine_chunks()
        self.lengths: np.ndarray = self.table[ChunkColumn.TOKENS].to_numpy().astype(np.int64)
        """Each chunk's length in tokens, by chunk number."""
        self._numbers_by_id = numbers_by_id
        self._headers: list[ChunkHeader | None] = [None] * self.table.num_rows
        """Headers made so far, by chunk number (a chunk found once is likely found again)."""
        self._only_values: dict[str, str | None] = {}

    def only_value(self, column: str) -> str | None:
        """The value every chunk has in `column` (a string column), or None where they differ or
        there are no chunks: what need not be said of each result."""
        if column not in self._only_values:
            values = pc.unique(self.table[column]) if self.table.num_rows else pa.array([], pa.string())
            self._only_values[column] = values[0].as_py() if len(values) == 1 else None
        return self._only_values[column]

    def ids(self) -> np.ndarray:
        """The chunk ids, by chunk number, as a NumPy array of strings."""
        return np.asarray(self.chunk_ids.to_numpy(zero_copy_only=False), dtype=str)

    @cached_property
    def numbers_by_id(self) -> np.ndarray:
        """Chunk numbers in sorted id order: ids are found by bisection."""
        given = self._numbers_by_id
        if given is None:
            return np.argsort(self.ids(), kind="stable")
        return given() if callable(given) else given

    @cached_property
    def id_rank(self) -> np.ndarray:
        """Position of each chunk number's id in sorted id order (ties are ranked by chunk id)."""
        rank = np.empty(len(self.numbers_by_id), dtype=np.int64)
        rank[self.numbers_by_id] = np.arange(len(self.numbers_by_id))
        return rank

    @cached_property
    def sorted_ids(self) -> np.ndarray:
        """The chunk ids, sorted (made when an id is first looked up)."""
        return self.ids()[self.numbers_by_id]

    def __len__(self) -> int:
        return self.table.num_rows

    @cached_property
    def labels(self) -> pa.Table:
        """What scopes select chunks by, by chunk number, named as the chunk columns: source,
        file type, metadata (JSON text, "" for none), doc key, and the sentence count."""
        return pa.table(
            {
                ChunkColumn.SOURCE: pc.fill_null(self.table[ChunkColumn.SOURCE], "").combine_chunks(),
                ChunkColumn.FILE_TYPE: self.table[ChunkColumn.FILE_TYPE].combine_chunks(),
                ChunkColumn.METADATA: pc.fill_null(self.table[ChunkColumn.METADATA], "").combine_chunks(),
                ChunkColumn.DOC_KEY: pc.utf8_slice_codeunits(self.chunk_ids, 0, DOC_KEY_CHARS),
                SENTENCE_COUNT: self.table[SENTENCE_COUNT].combine_chunks(),
            }
        )

    def doc_keys_in(self, scope: np.ndarray) -> list[str]:
        """The keys of the documents a scope's chunks (a mask over chunk numbers) belong to: scopes
        select whole documents, so a search can filter sentences and chunk vectors by doc key."""
        return pc.unique(self.labels[ChunkColumn.DOC_KEY].filter(pa.array(scope))).to_pylist()

    def numbers_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Chunk numbers of these ids, in the order given; ids not in the index are left out."""
        numbers, found = self.locate(chunk_ids)
        return numbers[found]

    def locate(self, chunk_ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(chunk number, whether the id is in the index) of each id."""
        if not len(chunk_ids) or not len(self):
            return np.zeros(len(chunk_ids), dtype=np.int64), np.zeros(len(chunk_ids), dtype=bool)
        wanted = np.asarray(chunk_ids, dtype=str)
        at = np.minimum(np.searchsorted(self.sorted_ids, wanted), len(self.sorted_ids) - 1)
        return self.numbers_by_id[at].astype(np.int64), self.sorted_ids[at] == wanted

    def headers_at(self, numbers: Sequence[int] | np.ndarray) -> list[ChunkHeader]:
        """The headers of these chunk numbers, in the order given."""
        wanted = np.asarray(numbers, dtype=np.int64).tolist()
        missing = [number for number in wanted if self._headers[number] is None]
        for number, header in zip(missing, self._made(missing)):
            self._headers[number] = header
        return [self._headers[number] for number in wanted]  # type: ignore[misc]

    def _made(self, numbers: list[int]) -> list[ChunkHeader]:
        """Headers of these chunk numbers, made from their held columns in one take (held as Python
        values for every chunk, the columns took 500 MB more memory at 1M chunks)."""
        if not numbers:
            return []
        field = self.table.take(pa.array(numbers, pa.int64())).to_pydict()
        return [
            ChunkHeader(
                chunk_id=field[ChunkColumn.ID][at],
                doc_id=field[ChunkColumn.DOC_ID][at],
                title=field[ChunkColumn.TITLE][at] or "",
                source=field[ChunkColumn.SOURCE][at] or "",
                part=field[ChunkColumn.PART][at],
                parts=field[ChunkColumn.PARTS][at],
                sentence_count=field[SENTENCE_COUNT][at],
                tokens=field[ChunkColumn.TOKENS][at],
                metadata=json.loads(field[ChunkColumn.METADATA][at]) if field[ChunkColumn.METADATA][at] else {},
                heading_path=tuple(field[ChunkColumn.HEADING_PATH][at] or NO_HEADINGS),
                pages=None
                if field[ChunkColumn.FIRST_PAGE][at] is None
                else (field[ChunkColumn.FIRST_PAGE][at], field[ChunkColumn.LAST_PAGE][at]),
                file_type=field[ChunkColumn.FILE_TYPE][at],
            )
            for at in range(len(numbers))
        ]
