"""An index read whole into memory: what the reference scorers (brute_force.py) rank, for tests
and benchmarks. The server never holds a whole index this way."""

from __future__ import annotations

import numpy as np
from arag_mcp.indexer import Chunk, IndexSnapshot
from arag_mcp.indexer.index.schema import ChunkVectorColumn, SentenceColumn


def all_chunks(snapshot: IndexSnapshot) -> list[Chunk]:
    """Every chunk, in chunk-number order."""
    return list(snapshot.chunks.at(np.arange(snapshot.chunk_count)).values())


def sentence_vectors(snapshot: IndexSnapshot) -> tuple[list[str], np.ndarray]:
    """(chunk id of each sentence, its vector) for every sentence: read batch by batch into one
    float32 matrix, so the vectors are held once."""
    table = snapshot.sentences.table
    matrix = np.empty((table.count_rows(), snapshot.manifest.dimension), np.float32)
    chunk_ids: list[str] = []
    for batch in table.search().select([SentenceColumn.CHUNK_ID, SentenceColumn.VECTOR]).limit(None).to_batches():
        vectors = batch.column(SentenceColumn.VECTOR).flatten().to_numpy()
        matrix[len(chunk_ids) : len(chunk_ids) + batch.num_rows] = vectors.reshape(batch.num_rows, -1)
        chunk_ids += batch.column(SentenceColumn.CHUNK_ID).to_pylist()
    return chunk_ids, matrix


def chunk_vectors(snapshot: IndexSnapshot) -> tuple[list[str], np.ndarray]:
    """(chunk id, vector) of every chunk."""
    table = (
        snapshot.chunk_vectors.table.search()
        .select([ChunkVectorColumn.CHUNK_ID, ChunkVectorColumn.VECTOR])
        .limit(None)
        .to_arrow()
    )
    vectors = np.asarray(table[ChunkVectorColumn.VECTOR].combine_chunks().flatten().to_numpy(), dtype=np.float32)
    return table[ChunkVectorColumn.CHUNK_ID].to_pylist(), vectors.reshape(table.num_rows, -1)
