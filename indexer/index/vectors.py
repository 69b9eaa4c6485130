"""Exact nearest-sentence search over the sentence vectors held in memory.

LanceDB's flat search reads and scores the vector column on every query (hundreds of ms at
100k sentences); in memory, int8 codes of the vectors preselect candidates that provably hold
the nearest sentences (quantised.py) and one float32 product over those scores them exactly.
The sentence columns semantic search shows are held beside them, so a query touches no storage.
Above VECTOR_INDEX_MIN_ROWS the IVF-PQ index answers instead: the float32 matrix would
outgrow the server's memory budget (1.5 GB at 1M sentences).

The matrix is read on first use, not when a snapshot is opened, so opening (and the MCP
handshake) costs nothing; a new build reuses the previous build's vectors of every document
whose content is unchanged and reads only the rest.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .catalogue import ChunkCatalogue
from .manifest import Manifest
from .quantised import QuantisedScorer
from .reading import scan
from .schema import ChunkColumn, SentenceColumn

HELD_COLUMNS = (SentenceColumn.CHUNK_ID, SentenceColumn.POSITION, SentenceColumn.TEXT)
"""Sentence columns held in memory beside the vectors: what semantic search returns."""
VECTOR_INDEX_MIN_ROWS = 200_000
"""Below this many sentences semantic search is exact (a float32 matrix in memory); from here on
an IVF-PQ index is built (writer.py), and search re-ranks its candidates with the exact vectors.
Where the two cross, and the recall the index's search settings give, are measured by
bench/speed.py (bench/README.md)."""
VECTOR_BATCH_ROWS = 8_192
"""Sentences per batch read into the matrix: each batch is held beside it (12 MB of 384-dimension
vectors) until copied in."""
QUANTISED_MIN_ROWS = 20_000
"""From this many rows, int8 codes preselect the candidates the float32 product scores exactly
(quantised.py); below it the whole float32 product is as fast or faster. Measured on 2 idle cores,
p50 of the nearest 100 of 300 queries: 10k rows 0.38 ms with codes against 0.34 ms without;
100k rows 2.5 ms against 5.7 ms."""
TAKE_BATCH = 10_000

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SentenceMatches:
    """Sentences nearest a query, best first: parallel arrays."""

    chunk_numbers: np.ndarray
    """The chunk number of each sentence's chunk (the catalogue's numbering)."""
    positions: np.ndarray
    """Each sentence's place in its chunk."""
    texts: list[str]
    similarities: np.ndarray
    """Cosine similarity to the query (vectors are unit length)."""

    def __len__(self) -> int:
        return len(self.chunk_numbers)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SentenceMatches)
            and np.array_equal(self.chunk_numbers, other.chunk_numbers)
            and np.array_equal(self.positions, other.positions)
            and self.texts == other.texts
            and np.array_equal(self.similarities, other.similarities)
        )


@dataclass(frozen=True)
class _Matrix:
    vectors: np.ndarray
    """(sentences, dimension) float32, C-contiguous: exact scores, of candidates or of every sentence."""
    rows: pa.Table
    """Chunk id, position and the document's content hash (`doc_hash`): what identifies each
    sentence's vector for reuse by the next build; aligned with `vectors`."""
    chunk_numbers: np.ndarray
    """The catalogue's number of each sentence's chunk (rows differ in number from build to build)."""
    positions: np.ndarray
    texts: list[str]
    """Each sentence's text (a list: a search takes a few texts without an Arrow call)."""
    scorer: QuantisedScorer | None


class SentenceVectors:
    """The vectors and shown columns of one build's sentence table, read once, on first use."""

    def __init__(
        self,
        sentences: Any,
        chunks: Any,
        catalogue: ChunkCatalogue,
        manifest: Manifest,
        previous: SentenceVectors | None,
    ) -> None:
        self._sentences = sentences
        self._chunks = chunks
        self._catalogue = catalogue
        self._settings = manifest.vector_settings
        """A build that changes none of them leaves the vectors of unchanged documents as they were."""
        reusable = previous is not None and previous._settings == self._settings
        self._previous = previous._matrix if reusable else None
        self._matrix: _Matrix | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Read the matrix now (a server does so off the request path)."""
        self._loaded()

    def _loaded(self) -> _Matrix:
        with self._lock:
            if self._matrix is None:
                self._matrix = _read(self._sentences, self._chunks, self._catalogue, self._previous)
                self._previous = None
            return self._matrix

    def nearest(self, vector: np.ndarray, limit: int, scope: np.ndarray | None = None) -> SentenceMatches:
        """The `limit` sentences with the highest dot product with `vector`, best first (ties: the
        earlier row); with `scope` (a mask over chunk numbers), among its chunks' sentences only,
        the others left out before candidates are chosen."""
        matrix = self._loaded()
        count = len(matrix.vectors)
        inside = None if scope is None else scope[matrix.chunk_numbers]
        available = count if inside is None else int(inside.sum())
        limit = min(limit, available)
        query = vector.astype(np.float32)
        rows: np.ndarray | None = None  # the rows scored, where not every row is
        if matrix.scorer is not None and limit < available:
            rows = matrix.scorer.candidates(query, limit, inside)
            scores = matrix.vectors[rows] @ query
        elif inside is not None:
            rows = np.flatnonzero(inside)
            scores = matrix.vectors[rows] @ query
        else:
            scores = matrix.vectors @ query
        kept = len(scores) - limit
        top = np.argpartition(scores, kept)[kept:] if kept > 0 else np.arange(len(scores))
        best = top if rows is None else rows[top]
        order = np.lexsort((best, -scores[top]))
        top, best = top[order], best[order]
        return SentenceMatches(
            matrix.chunk_numbers[best],
            matrix.positions[best],
            [matrix.texts[at] for at in best.tolist()],
            scores[top].astype(np.float64),
        )


def _read(sentences: Any, chunks: Any, catalogue: ChunkCatalogue, previous: _Matrix | None) -> _Matrix:
    """The sentence table's vectors and shown columns; vectors of unchanged documents come from
    `previous` (same content hash, chunk id and position), the rest from the table. Read in batches
    into the matrix, so memory never holds the vectors twice."""
    started = time.perf_counter()
    columns = [*HELD_COLUMNS, SentenceColumn.DOC_KEY]
    vectors = None
    if previous is None:
        columns.append(SentenceColumn.VECTOR)
        vectors = np.empty(
            (sentences.count_rows(), sentences.schema.field(SentenceColumn.VECTOR).type.list_size), np.float32
        )
    reader = scan(sentences.search().select(columns).with_row_id(True), VECTOR_BATCH_ROWS)
    parts, filled = [], 0
    for batch in reader:
        if vectors is not None:
            vectors[filled : filled + batch.num_rows] = _as_matrix(batch.column(SentenceColumn.VECTOR))
            filled += batch.num_rows
            batch = batch.drop_columns([SentenceColumn.VECTOR])
        parts.append(batch)
    schema = (
        reader.schema.remove(reader.schema.get_field_index(SentenceColumn.VECTOR))
        if vectors is not None
        else reader.schema
    )
    rows = pa.Table.from_batches(parts, schema=schema).combine_chunks()
    documents = scan(
        chunks.search().where(f"{ChunkColumn.PART} = 0").select([ChunkColumn.DOC_KEY, ChunkColumn.DOC_HASH])
    ).read_all()
    at = pc.index_in(rows[SentenceColumn.DOC_KEY], value_set=documents[ChunkColumn.DOC_KEY])
    rows = rows.drop_columns([SentenceColumn.DOC_KEY]).append_column(
        ChunkColumn.DOC_HASH, documents[ChunkColumn.DOC_HASH].take(at)
    )
    reused = 0
    if vectors is None:
        vectors, reused = _reuse(sentences, rows, previous)
    log.info(
        "sentence vectors in memory: %d reused from the previous build, %d read (%.1f s)",
        reused,
        rows.num_rows - reused,
        time.perf_counter() - started,
    )
    rows = rows.drop_columns(["_rowid"])
    numbers, found = catalogue.locate(rows[SentenceColumn.CHUNK_ID].to_numpy(zero_copy_only=False))
    if not found.all():
        raise ValueError("sentences of chunks missing from the chunks table")
    positions = rows[SentenceColumn.POSITION].to_numpy()
    texts = rows[SentenceColumn.TEXT].to_pylist()
    scorer = QuantisedScorer(vectors) if len(vectors) >= QUANTISED_MIN_ROWS else None
    return _Matrix(vectors, rows.drop_columns([SentenceColumn.TEXT]), numbers, positions, texts, scorer)


def _reuse(sentences: Any, rows: pa.Table, previous: _Matrix) -> tuple[np.ndarray, int]:
    """Vectors for `rows`, copied from `previous` where the sentence is unchanged and read by row id
    otherwise, and how many were copied."""
    found = pc.index_in(_keys(rows), value_set=_keys(previous.rows))
    vectors = np.empty((rows.num_rows, previous.vectors.shape[1]), dtype=np.float32)
    kept = found.is_valid().to_numpy(zero_copy_only=False)
    vectors[kept] = previous.vectors[found.drop_null().to_numpy()]
    missing = np.flatnonzero(~kept)
    row_ids = rows["_rowid"].to_numpy()
    for first in range(0, len(missing), TAKE_BATCH):
        wanted = missing[first : first + TAKE_BATCH]
        read = sentences.take_row_ids(row_ids[wanted].tolist()).select([SentenceColumn.VECTOR]).with_row_id().to_arrow()
        vectors[wanted[np.argsort(row_ids[wanted])]] = _as_matrix(read.sort_by("_rowid")[SentenceColumn.VECTOR])
    return vectors, int(kept.sum())


def _keys(rows: pa.Table) -> pa.Array:
    """What identifies a sentence's vector across builds: its document's content, chunk and place."""
    position = pc.cast(rows[SentenceColumn.POSITION], pa.string())
    return pc.binary_join_element_wise(rows[ChunkColumn.DOC_HASH], rows[SentenceColumn.CHUNK_ID], position, "\x1f")


def _as_matrix(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    vectors = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    width = vectors.type.list_size
    return np.ascontiguousarray(vectors.flatten().to_numpy().reshape(-1, width), dtype=np.float32)
