"""The semantic tools' definitions computed the slow, obvious way: what tests and benchmarks check
them against (keyword_search's is arag_mcp.indexer.index.keywords.definition).

Each function ranks chunks as a tool's contract says, over vectors held in memory, with ties broken
by chunk id; the tools must return the same ids and scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class SentenceMatrix:
    """Every sentence vector in one matrix, with the chunk each belongs to."""

    def __init__(self, chunk_ids: Sequence[str], vectors: np.ndarray) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.owner_ids, self.owners = np.unique(np.asarray(chunk_ids), return_inverse=True)

    def best_sentence_ranking(self, query: np.ndarray, top_k: int) -> list[tuple[str, float]]:
        """semantic_search's definition: chunks by their best sentence's cosine similarity."""
        scores = self.vectors @ query.astype(np.float32)
        best = np.full(len(self.owner_ids), -np.inf, dtype=np.float32)
        np.maximum.at(best, self.owners, scores)
        order = np.lexsort((self.owner_ids, -best))[:top_k]
        return [(str(self.owner_ids[i]), float(best[i])) for i in order]


def vector_ranking(
    chunk_ids: Sequence[str], vectors: np.ndarray, query: np.ndarray, top_k: int
) -> list[tuple[str, float]]:
    """Naive RAG's definition: chunks by their own vector's cosine similarity to the query."""
    scores = np.asarray(vectors, dtype=np.float32) @ query.astype(np.float32)
    order = np.lexsort((np.asarray(chunk_ids), -scores))[:top_k]
    return [(chunk_ids[i], float(scores[i])) for i in order]
