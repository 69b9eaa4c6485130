"""The A-RAG retrieval operations as plain functions over an index snapshot.

Nothing here knows about MCP or conversations: the tools validate arguments, conversations.py
tracks what a conversation has read, the output modules render hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from arag_mcp.indexer.index.ranked import Hit

if TYPE_CHECKING:
    from arag_mcp.indexer.index.snapshot import IndexSnapshot

MATCHED_SENTENCES = 3


def semantic_search(
    snapshot: IndexSnapshot, query_vector: np.ndarray, top_k: int, scope: np.ndarray | None = None
) -> list[Hit]:
    """Chunks ranked by their best sentence's cosine similarity to the query (ties: chunk id); with
    `scope` (a mask over chunk numbers), among the sentences of its chunks only.

    The nearest `candidate_pool(top_k)` sentences are grouped by chunk; a chunk's matched
    sentences are its best `MATCHED_SENTENCES` among them, shown in document order.
    """
    pool = candidate_pool(top_k)
    total = snapshot.sentences.count(scope)
    while True:
        nearest = snapshot.sentences.nearest(query_vector, pool, scope)
        chunks, first = np.unique(nearest.chunk_numbers, return_index=True)
        if len(chunks) >= top_k or pool >= total:
            break
        pool *= 4
    # Sentences come best first, so a chunk's first sentence is its best.
    best = nearest.similarities[first]
    chosen = np.lexsort((snapshot.catalogue.id_rank[chunks], -best))[:top_k]
    numbers = chunks[chosen]
    headers = snapshot.catalogue.headers_at(numbers)
    matched: dict[int, list[tuple[float, int, str]]] = {int(n): [] for n in numbers}
    for number, position, text, score in zip(
        nearest.chunk_numbers.tolist(), nearest.positions.tolist(), nearest.texts, nearest.similarities.tolist()
    ):
        if number in matched:
            matched[number].append((score, position, text))
    return [
        Hit(header, float(score), best_sentences(matched[int(number)]))
        for header, number, score in zip(headers, numbers, best[chosen])
    ]


def candidate_pool(top_k: int) -> int:
    """How many nearest sentences are considered for `top_k` chunks."""
    return max(50, 10 * top_k)


def best_sentences(sentences: list[tuple[float, int, str]]) -> list[str]:
    """Texts of the `MATCHED_SENTENCES` most similar sentences, in document order."""
    best = sorted(sentences, key=lambda item: (-item[0], item[1]))[:MATCHED_SENTENCES]
    return [text for _, _, text in sorted(best, key=lambda item: item[1])]


def naive_search(
    snapshot: IndexSnapshot, query_vector: np.ndarray, top_k: int, scope: np.ndarray | None = None
) -> list[Hit]:
    """Naive RAG: chunks ranked by their own vector's cosine similarity to the query (ties: chunk
    id); with `scope` (a mask over chunk numbers), among its chunks only."""
    nearest = snapshot.chunk_vectors.nearest(query_vector, top_k, scope)
    chunks = snapshot.chunks.by_id([cid for cid, _ in nearest])
    ranked = sorted(nearest, key=lambda item: (-item[1], item[0]))
    return [Hit(chunks[cid], score, []) for cid, score in ranked if cid in chunks]


@dataclass(frozen=True)
class MergedHit:
    """A chunk found by one or more of several queries: its best hit, and which queries found it;
    or found by keywords (then `queries` is empty and `hit` is `keyword_hit`)."""

    hit: Hit
    queries: list[int]
    keyword_hit: Hit | None = None
    """The chunk as keyword search found it, where it did."""


def merged_semantic_search(
    snapshot: IndexSnapshot, query_vectors: Sequence[np.ndarray], top_k: int, scope: np.ndarray | None = None
) -> list[MergedHit]:
    """semantic_search for each query (top_k each, within `scope`), merged: a chunk appears once,
    with its best score and matched sentences; ranked by that score (ties: chunk id)."""
    merged: dict[str, MergedHit] = {}
    for number, vector in enumerate(query_vectors):
        for hit in semantic_search(snapshot, vector, top_k, scope):
            earlier = merged.get(hit.chunk.chunk_id)
            if earlier is None:
                merged[hit.chunk.chunk_id] = MergedHit(hit, [number])
            else:
                best = hit if hit.score > earlier.hit.score else earlier.hit
                merged[hit.chunk.chunk_id] = MergedHit(best, [*earlier.queries, number])
    return sorted(merged.values(), key=lambda found: (-found.hit.score, found.hit.chunk.chunk_id))


def with_keyword_hits(found: list[MergedHit], keyword_hits: list[Hit]) -> list[MergedHit]:
    """The semantic results, each with its keyword hit where keyword search found that chunk too,
    then the chunks only keyword search found, in its order."""
    by_chunk = {hit.chunk.chunk_id: hit for hit in keyword_hits}
    merged = [replace(result, keyword_hit=by_chunk.pop(result.hit.chunk.chunk_id, None)) for result in found]
    return merged + [MergedHit(hit, [], hit) for hit in by_chunk.values()]
