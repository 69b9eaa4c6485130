"""Nearest sentences to a query vector: exact in memory for a small index, through the IVF-PQ index
above its size, and exactly from a small scope's own vectors there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .catalogue import SENTENCE_COUNT, ChunkCatalogue
from .document_lines import DocumentLines
from .manifest import Manifest
from .reading import read, reading, sql_list
from .schema import SENTENCES, SentenceColumn
from .vectors import SentenceMatches, SentenceVectors

EXACT_SCOPE_SENTENCES = 20_000
"""Above the IVF-PQ index's size, a scope of up to this many sentences is searched exactly from its
own vectors; a larger one through the index, filtered first, whose few probed partitions miss much
of a small scope. bench/scope.py at 1M sentences on 2 busy cores, p50 ms exact against filtered
index search (its recall@10): 500 sentences 7 against 15 (0.58); 5,000 30 against 22 (0.82);
20,000 86 against 35 (0.93); 50,000 182 against 79 (0.98); 250,000 771 against 156 (1.0). Up to
here a scoped search stays exact, under 100 ms."""


@dataclass(frozen=True)
class SentenceSearch:
    """Searches of the sentences table by vector."""

    uri: str
    table: Any
    catalogue: ChunkCatalogue
    manifest: Manifest
    in_memory: SentenceVectors | None
    """Exact search in memory, below the size where the IVF-PQ index answers (None above it)."""

    def nearest(self, vector: np.ndarray, limit: int, scope: np.ndarray | None = None) -> SentenceMatches:
        """The `limit` sentences with the highest cosine similarity to `vector` (a dot product:
        vectors are unit length): exact, in memory, below the IVF-PQ index's size; through the
        index above it (`_distance`, 1 - dot, is asked for by name, as LanceDB requires). With
        `scope` (a mask over chunk numbers), among its chunks' sentences only: above the index's
        size, a scope of up to EXACT_SCOPE_SENTENCES is searched exactly from its own vectors,
        a larger one through the index, filtered before the search."""
        if self.in_memory is not None:
            with reading(self.uri, SENTENCES):
                return self.in_memory.nearest(vector, limit, scope)
        if scope is not None and self.count(scope) <= EXACT_SCOPE_SENTENCES:
            found = self._nearest_in(vector, limit, self.catalogue.doc_keys_in(scope))
        else:
            search = self.table.search(vector.astype(np.float32)).distance_type("dot").limit(limit)
            if scope is not None:
                doc_keys = sql_list(self.catalogue.doc_keys_in(scope))
                search = search.where(f"{SentenceColumn.DOC_KEY} IN ({doc_keys})", prefilter=True)
            vector_index = self.manifest.vector_index
            if vector_index:
                search = search.nprobes(vector_index["nprobes"]).refine_factor(vector_index["refine_factor"])
            found = read(
                self.uri,
                SENTENCES,
                search.select(
                    [SentenceColumn.CHUNK_ID, SentenceColumn.POSITION, SentenceColumn.TEXT, "_distance"]
                ).to_arrow,
            )
        numbers, known = self.catalogue.locate(found[SentenceColumn.CHUNK_ID].to_numpy(zero_copy_only=False))
        return SentenceMatches(
            numbers[known],
            found[SentenceColumn.POSITION].to_numpy()[known],
            [text for text, kept in zip(found[SentenceColumn.TEXT].to_pylist(), known) if kept],
            (1.0 - found["_distance"].to_numpy().astype(np.float64))[known],
        )

    def count(self, scope: np.ndarray | None = None) -> int:
        """How many sentences the index holds, or the chunks of `scope` (a mask over chunk numbers) hold."""
        if scope is None:
            return self.manifest.counts.sentences
        return int(self.catalogue.labels[SENTENCE_COUNT].to_numpy()[scope].sum())

    def of_document(self, document: DocumentLines) -> tuple[list[str], list[int], np.ndarray]:
        """(chunk id, start offset in its chunk, vector) of every sentence of `document`."""
        query = (
            self.table.search()
            .where(f"{SentenceColumn.DOC_KEY} = '{document.doc_key}'")
            .select([SentenceColumn.CHUNK_ID, SentenceColumn.START, SentenceColumn.VECTOR])
            .limit(None)
        )
        table = read(self.uri, SENTENCES, query.to_arrow)
        vectors = np.asarray(table[SentenceColumn.VECTOR].combine_chunks().flatten().to_numpy(), dtype=np.float32)
        return (
            table[SentenceColumn.CHUNK_ID].to_pylist(),
            table[SentenceColumn.START].to_pylist(),
            vectors.reshape(table.num_rows, -1),
        )

    def _nearest_in(self, vector: np.ndarray, limit: int, doc_keys: Sequence[str]) -> pa.Table:
        """Exact search over these documents' sentences, read with their vectors (the doc key is
        indexed), as the index search reports it."""
        query = (
            self.table.search()
            .where(f"{SentenceColumn.DOC_KEY} IN ({sql_list(doc_keys)})")
            .select([SentenceColumn.CHUNK_ID, SentenceColumn.POSITION, SentenceColumn.TEXT, SentenceColumn.VECTOR])
            .limit(None)
        )
        rows = read(self.uri, SENTENCES, query.to_arrow)
        vectors = rows[SentenceColumn.VECTOR].combine_chunks().flatten().to_numpy().reshape(rows.num_rows, -1)
        scores = vectors @ vector.astype(np.float32)
        best = np.argsort(-scores, kind="stable")[:limit]
        found = rows.select([SentenceColumn.CHUNK_ID, SentenceColumn.POSITION, SentenceColumn.TEXT]).take(best)
        return found.append_column("_distance", pa.array(1.0 - scores[best], pa.float32()))
