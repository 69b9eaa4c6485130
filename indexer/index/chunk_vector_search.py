"""Nearest chunks to a query vector, by the one vector each chunk has (naive embedding search)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .catalogue import ChunkCatalogue
from .reading import read, sql_list
from .schema import CHUNK_VECTORS, ChunkVectorColumn


@dataclass(frozen=True)
class ChunkVectorSearch:
    """Searches of the chunk vectors table."""

    uri: str
    table: Any
    catalogue: ChunkCatalogue

    def nearest(self, vector: np.ndarray, limit: int, scope: np.ndarray | None = None) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the `limit` chunks whose vector is nearest `vector`, best
        first; with `scope` (a mask over chunk numbers), among its chunks only (filtered before the
        search, which scans every vector: the table has no vector index)."""
        search = self.table.search(vector.astype(np.float32), vector_column_name=ChunkVectorColumn.VECTOR)
        if scope is not None:
            search = search.where(
                f"{ChunkVectorColumn.DOC_KEY} IN ({sql_list(self.catalogue.doc_keys_in(scope))})", prefilter=True
            )
        found = read(
            self.uri,
            CHUNK_VECTORS,
            search.distance_type("dot").limit(limit).select([ChunkVectorColumn.CHUNK_ID, "_distance"]).to_arrow,
        )
        return list(zip(found[ChunkVectorColumn.CHUNK_ID].to_pylist(), (1.0 - found["_distance"].to_numpy()).tolist()))
