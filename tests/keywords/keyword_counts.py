"""A lone one-word keyword's count in each chunk it matches, read back from the chunks' BM25
scores, so tests can check hand-counted occurrences (titles included) under rarity weighting."""

from __future__ import annotations

from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.keywords.weights import K1, RarityWeights
from arag_mcp.indexer.index.snapshot import IndexSnapshot


def occurrences(snapshot: IndexSnapshot, keyword: str) -> dict[str, int]:
    """{title: count} of the chunks `keyword` matches: score = idf·c·(K1+1)/(c + norm), solved for c
    (a one-word keyword's document frequency is the number of chunks it matches)."""
    found = keyword_search(snapshot, [keyword], top_k=20)
    weights = RarityWeights(snapshot.catalogue.lengths, [found.per_keyword[0].at_least], None)
    [idf] = weights.idfs
    counts = {}
    for hit in found.hits:
        [number] = snapshot.catalogue.numbers_of([hit.chunk.chunk_id])
        counts[hit.chunk.title] = round(float(hit.score * weights.norms(number) / (idf * (K1 + 1) - hit.score)))
    return counts
