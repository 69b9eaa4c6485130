"""Exact nearest-sentence search over the sentence vectors held in memory.

LanceDB's flat search reads and scores the vector column on every query (hundreds of ms at
100k sentences); a float32 matrix in memory is one BLAS matrix-vector product instead, a few ms.
The sentence columns semantic search shows are held beside it, so a query touches no storage.
Above `store.VECTOR_INDEX_MIN_ROWS` the IVF-PQ index answers instead: the matrix would outgrow
the server's memory budget (1.5 GB at 1M sentences) and scanning it would outgrow the IVF-PQ
index's latency.

The matrix is read on first use, not when a snapshot is opened, so opening (and the MCP
handshake) costs nothing; a new build reuses the previous build's vectors of every document
whose content is unchanged and reads only the rest.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from threadpoolctl import ThreadpoolController

from .ids import DOC_KEY_CHARS
from .manifest import Manifest
from .schema import ChunkColumn, SentenceColumn

C = ChunkColumn
S = SentenceColumn
HELD_COLUMNS = (S.CHUNK_ID, S.POSITION, S.TEXT)
"""Sentence columns held in memory: what semantic search returns (a search for others goes to LanceDB)."""
VECTOR_SETTINGS = (
    "model",
    "embedding_backend",
    "dimension",
    "document_prompt",
    "chunk_tokens",
    "sentence_tokens",
    "splitter",
    "sentence_context",
)
"""Manifest fields that, with a document's content, determine its sentences' vectors: a build
that changes none of them leaves the vectors of unchanged documents as they were."""
SINGLE_THREAD_MAX_ROWS = 50_000
"""Up to this many rows the product runs on one BLAS thread: waking the other costs more than it
saves, and far more when the cores are busy. Measured with NumPy on 2 busy cores, p50 (p95) ms of
one product, one thread against two: 10k rows 0.5 (0.6) against 0.25-7.4 (8.2); 30k 1.7 (2.5)
against 6.2 (6.4); 100k 17.7 (21) against 14.0 (17)."""
TAKE_BATCH = 10_000
DOC_HASH = "doc_hash"
"""Held beside each sentence: its document's content hash, the key for reuse across builds."""

_blas = ThreadpoolController()
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Matrix:
    vectors: np.ndarray
    """(sentences, dimension) float32, C-contiguous: one BLAS product scores every sentence."""
    rows: pa.Table
    """HELD_COLUMNS and the document's content hash (`doc_hash`, the key for reuse), aligned with `vectors`."""


class SentenceVectors:
    """The vectors and shown columns of one build's sentence table, read once, on first use."""

    def __init__(self, sentences: Any, chunks: Any, manifest: Manifest, previous: SentenceVectors | None) -> None:
        self._sentences = sentences
        self._chunks = chunks
        self._settings = {field: manifest.raw.get(field) for field in VECTOR_SETTINGS}
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
                self._matrix = _read(self._sentences, self._chunks, self._previous)
                self._previous = None
            return self._matrix

    def nearest(
        self, vector: np.ndarray, limit: int, columns: list[str], doc_keys: Sequence[str] | None = None
    ) -> pa.Table:
        """The `limit` sentences with the highest dot product, best first, with `columns` (a subset
        of HELD_COLUMNS) and `_distance` = 1 - dot, as LanceDB's dot distance reports it; with
        `doc_keys`, among those documents' sentences only (the others score below any sentence)."""
        matrix = self._loaded()
        count = len(matrix.vectors)
        if count <= SINGLE_THREAD_MAX_ROWS:
            with _blas.limit(limits=1, user_api="blas"):
                scores = matrix.vectors @ vector.astype(np.float32)
        else:
            scores = matrix.vectors @ vector.astype(np.float32)
        if doc_keys is not None:
            owners = pc.utf8_slice_codeunits(matrix.rows[S.CHUNK_ID], 0, DOC_KEY_CHARS)
            inside = pc.is_in(owners, value_set=pa.array(doc_keys, pa.string())).to_numpy(zero_copy_only=False)
            scores[~inside] = -np.inf
            limit = min(limit, int(inside.sum()))
        limit = min(limit, count)
        best = np.argpartition(scores, count - limit)[count - limit :] if limit < count else np.arange(count)
        best = best[np.argsort(-scores[best], kind="stable")]
        table = matrix.rows.select(columns).take(best)
        return table.append_column("_distance", pa.array(1.0 - scores[best], pa.float32()))


def _read(sentences: Any, chunks: Any, previous: _Matrix | None) -> _Matrix:
    """The sentence table's vectors and shown columns; vectors of unchanged documents come from
    `previous` (same content hash, chunk id and ordinal), the rest from the table. Read in batches
    into the matrix, so memory never holds the vectors twice."""
    started = time.perf_counter()
    columns = [*HELD_COLUMNS, S.DOC_KEY]
    vectors = None
    if previous is None:
        columns.append(S.VECTOR)
        vectors = np.empty((sentences.count_rows(), sentences.schema.field(S.VECTOR).type.list_size), np.float32)
    reader = sentences.search().select(columns).with_row_id(True).limit(None).to_batches()
    parts, filled = [], 0
    for batch in reader:
        if vectors is not None:
            vectors[filled : filled + batch.num_rows] = _as_matrix(batch.column(S.VECTOR))
            filled += batch.num_rows
            batch = batch.drop_columns([S.VECTOR])
        parts.append(batch)
    schema = reader.schema.remove(reader.schema.get_field_index(S.VECTOR)) if vectors is not None else reader.schema
    rows = pa.Table.from_batches(parts, schema=schema).combine_chunks()
    documents = chunks.search().where(f"{C.PART} = 0").select([C.DOC_KEY, C.DOC_HASH]).limit(None).to_arrow()
    at = pc.index_in(rows[S.DOC_KEY], value_set=documents[C.DOC_KEY])
    rows = rows.drop_columns([S.DOC_KEY]).append_column(DOC_HASH, documents[C.DOC_HASH].take(at))
    reused = 0
    if vectors is None:
        vectors, reused = _reuse(sentences, rows, previous)
    log.info(
        "sentence vectors in memory: %d reused from the previous build, %d read (%.1f s)",
        reused,
        rows.num_rows - reused,
        time.perf_counter() - started,
    )
    return _Matrix(vectors, rows.drop_columns(["_rowid"]))


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
        read = sentences.take_row_ids(row_ids[wanted].tolist()).select([S.VECTOR]).with_row_id().to_arrow()
        vectors[wanted[np.argsort(row_ids[wanted])]] = _as_matrix(read.sort_by("_rowid")[S.VECTOR])
    return vectors, int(kept.sum())


def _keys(rows: pa.Table) -> pa.Array:
    """What identifies a sentence's vector across builds: its document's content, chunk and place."""
    position = pc.cast(rows[S.POSITION], pa.string())
    return pc.binary_join_element_wise(rows[DOC_HASH], rows[S.CHUNK_ID], position, "\x1f")


def _as_matrix(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    vectors = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    width = vectors.type.list_size
    return np.ascontiguousarray(vectors.flatten().to_numpy().reshape(-1, width), dtype=np.float32)
