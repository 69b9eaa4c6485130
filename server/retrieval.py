"""The A-RAG retrieval operations as plain functions over an index snapshot.

Nothing here knows about MCP or conversations: the tools validate arguments, conversations.py
tracks what a conversation has read, results.py renders hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from arag_mcp.indexer.terms import lower, words_of

if TYPE_CHECKING:
    from arag_mcp.indexer.reader import Chunk, IndexSnapshot, SentenceMatches

SNIPPET_SEPARATOR = " ... "
MATCHED_SENTENCES = 3
PHRASE_READ_BATCH = 64
"""Chunk texts read at first to settle phrase counts; each further read doubles."""


@dataclass(frozen=True)
class Hit:
    """A ranked chunk and the sentences that made it match (keywords found, or nearest the query)."""

    chunk: Chunk
    score: float
    matched: list[str]


def normalise_keywords(keywords: Sequence[str]) -> list[str]:
    """Lower-cased, stripped, de-duplicated keywords in the order given."""
    stripped = [keyword.strip() for keyword in keywords if keyword.strip()]
    return list(dict.fromkeys(lower(pa.array(stripped, pa.string())).to_pylist()))


def keyword_search(snapshot: IndexSnapshot, keywords: Sequence[str], top_k: int) -> list[Hit]:
    """Chunks ranked by keyword score (ties: chunk id), with the sentences that contain a keyword.

    Scores are exact (the definition above) but come from the terms table's postings, not from a
    scan of every chunk (terms.py). A keyword made of one word's characters is counted from the
    postings alone. A keyword with other characters ("marie curie", "co-op") is bounded from
    above by its rarest word piece, and counted in the texts of the chunks whose bound could still
    reach the top k, best bound first, until none can: exact, reading a few texts, not thousands.
    """
    terms = normalise_keywords(keywords)
    if not terms:
        return []
    lookup = snapshot.keywords
    pieces = {term: list(dict.fromkeys(split)) for term, split in zip(terms, words_of(terms))}
    counts = PieceCounts(snapshot, sorted({piece for split in pieces.values() for piece in split}))
    known = np.zeros(len(lookup.chunk_ids), dtype=np.int64)
    bound = np.zeros_like(known)
    phrases = []
    for term, split in pieces.items():
        if split == [term]:
            known += counts.of(term) * len(term)
        else:
            phrases.append(term)
            bound += _phrase_bound(split, counts, len(known)) * len(term)
    scores = _resolve_phrases(snapshot, phrases, known, bound, top_k)
    best = top_chunks(scores, lookup.chunk_id_rank, top_k)
    chunks = snapshot.chunks_at(best)
    return [
        Hit(chunks[number], int(scores[number]), _matching_sentences(chunks[number], terms)) for number in best.tolist()
    ]


class PieceCounts:
    """count(piece, chunk) for every chunk number, for word-character pieces, from one postings read.

    A piece can only occur inside a word, so its count is Σ_w count(piece, w) · tf(w, chunk) over
    the vocabulary words w that contain it. Counts are made one piece at a time, on demand: a
    keyword's memory is a few arrays of one count per chunk, however many pieces it has.
    """

    def __init__(self, snapshot: IndexSnapshot, pieces: Sequence[str]) -> None:
        lookup = snapshot.keywords
        rows = [lookup.rows_containing(piece) for piece in pieces]
        postings = snapshot.postings(np.unique(np.concatenate([lookup.word_rows[:0], *rows])))
        self.terms = postings["term"]
        self.lengths = pc.list_value_length(postings["chunks"]).to_numpy(zero_copy_only=False)
        self.chunks = pc.list_flatten(postings["chunks"]).to_numpy(zero_copy_only=False)
        self.occurrences = pc.list_flatten(postings["counts"]).to_numpy(zero_copy_only=False)
        self.chunk_count = len(lookup.chunk_ids)

    def of(self, piece: str) -> np.ndarray:
        per_posting = np.repeat(
            pc.count_substring(self.terms, pattern=piece).to_numpy(zero_copy_only=False), self.lengths
        )
        at = np.flatnonzero(per_posting)
        weights = self.occurrences[at] * per_posting[at]
        return np.bincount(self.chunks[at], weights=weights, minlength=self.chunk_count).astype(np.int64)


def _phrase_bound(pieces: list[str], counts: PieceCounts, chunk_count: int) -> np.ndarray:
    """An upper bound of a phrase's count per chunk: non-overlapping occurrences of the phrase each
    hold their own occurrence of every piece, so no more than the rarest piece's count (a running
    minimum: two arrays whatever the number of pieces). A phrase with no word piece (punctuation
    only) is unbounded: every chunk is read."""
    bound = np.full(chunk_count, np.iinfo(np.int32).max, dtype=np.int64)
    for piece in pieces:
        np.minimum(bound, counts.of(piece), out=bound)
    return bound


def _resolve_phrases(
    snapshot: IndexSnapshot, phrases: list[str], known: np.ndarray, bound: np.ndarray, top_k: int
) -> np.ndarray:
    """Exact scores where they decide the top k: phrase counts are read from the texts of the
    chunks whose upper bound (known + bound) could still enter the top k, best bound first."""
    scores = known.copy()
    if not phrases:
        return scores
    rank = snapshot.keywords.chunk_id_rank
    pending = np.flatnonzero(bound)
    upper = known[pending] + bound[pending]
    pending = pending[np.lexsort((rank[pending], -upper))]
    settled = bound == 0
    batch = PHRASE_READ_BATCH
    while len(pending):
        best = top_chunks(np.where(settled, scores, 0), rank, top_k)
        if len(best) == top_k:
            kth = best[-1]
            challenger = pending[0]
            challenge = known[challenger] + bound[challenger]
            if (challenge, -rank[challenger]) < (scores[kth], -rank[kth]):
                break
        reading, pending = pending[:batch], pending[batch:]
        numbers, texts = snapshot.texts_at(reading)
        lowered = lower(texts)
        for phrase in phrases:
            scores[numbers] += pc.count_substring(lowered, pattern=phrase).to_numpy(zero_copy_only=False) * len(phrase)
        settled[numbers] = True
        batch *= 2
    return np.where(settled, scores, 0)


def top_chunks(scores: np.ndarray, id_rank: np.ndarray, top_k: int) -> np.ndarray:
    """Numbers of the `top_k` chunks with the highest non-zero scores; ties go to the smaller id."""
    scored = np.flatnonzero(scores)
    if scored.size > top_k:
        threshold = np.partition(scores[scored], -top_k)[-top_k]
        scored = scored[scores[scored] >= threshold]
    order = np.lexsort((id_rank[scored], -scores[scored]))
    return scored[order[:top_k]]


def _matching_sentences(chunk: Chunk, terms: Sequence[str]) -> list[str]:
    sentences = chunk.sentences
    lowered = lower(pa.array(sentences, pa.string()))
    matching = np.zeros(len(sentences), dtype=bool)
    for term in terms:
        matching |= pc.match_substring(lowered, pattern=term).to_numpy(zero_copy_only=False)
    return [sentence for sentence, keep in zip(sentences, matching) if keep]


def semantic_search(snapshot: IndexSnapshot, query_vector: np.ndarray, top_k: int) -> list[Hit]:
    """Chunks ranked by their best sentence's cosine similarity to the query.

    The nearest `candidate_pool(top_k)` sentences are grouped by chunk; a chunk's matched
    sentences are its best `MATCHED_SENTENCES` among them, shown in document order.
    """
    pool = candidate_pool(top_k)
    total = snapshot.manifest.counts.sentences
    while True:
        grouped = group_by_chunk(snapshot.nearest_sentences(query_vector, pool))
        if len(grouped) >= top_k or pool >= total:
            break
        pool *= 4
    ranked = sorted(grouped.items(), key=lambda item: (-item[1][0], item[0]))[:top_k]
    chunks = snapshot.chunks([cid for cid, _ in ranked])
    return [Hit(chunks[cid], score, best_sentences(sentences)) for cid, (score, sentences) in ranked if cid in chunks]


def candidate_pool(top_k: int) -> int:
    """How many nearest sentences are considered for `top_k` chunks."""
    return max(50, 10 * top_k)


def best_sentences(sentences: list[tuple[float, int, str]]) -> list[str]:
    """Texts of the `MATCHED_SENTENCES` most similar sentences, in document order."""
    best = sorted(sentences, key=lambda item: (-item[0], item[1]))[:MATCHED_SENTENCES]
    return [text for _, _, text in sorted(best, key=lambda item: item[1])]


def group_by_chunk(nearest: SentenceMatches) -> dict[str, tuple[float, list[tuple[float, int, str]]]]:
    """chunk id → (best similarity, [(similarity, sentence position, text), ...]) from nearest sentences."""
    grouped: dict[str, tuple[float, list[tuple[float, int, str]]]] = {}
    for cid, position, text, score in zip(nearest.chunk_ids, nearest.positions, nearest.texts, nearest.similarities):
        best, sentences = grouped.get(cid, (score, []))
        sentences.append((score, position, text))
        grouped[cid] = (max(best, score), sentences)
    return grouped


def naive_search(snapshot: IndexSnapshot, query_vector: np.ndarray, top_k: int) -> list[Hit]:
    """Naive RAG: chunks ranked by their own vector's cosine similarity to the query (ties: chunk id)."""
    nearest = snapshot.nearest_chunks(query_vector, top_k)
    chunks = snapshot.chunks([cid for cid, _ in nearest])
    ranked = sorted(nearest, key=lambda item: (-item[1], item[0]))
    return [Hit(chunks[cid], score, []) for cid, score in ranked if cid in chunks]


@dataclass(frozen=True)
class MergedHit:
    """A chunk found by one or more of several queries: its best hit, and which queries found it."""

    hit: Hit
    queries: list[int]


def merged_semantic_search(snapshot: IndexSnapshot, query_vectors: Sequence[np.ndarray], top_k: int) -> list[MergedHit]:
    """semantic_search for each query (top_k each), merged: a chunk appears once, with its best
    score and matched sentences; ranked by that score (ties: chunk id)."""
    merged: dict[str, MergedHit] = {}
    for number, vector in enumerate(query_vectors):
        for hit in semantic_search(snapshot, vector, top_k):
            earlier = merged.get(hit.chunk.chunk_id)
            if earlier is None:
                merged[hit.chunk.chunk_id] = MergedHit(hit, [number])
            else:
                best = hit if hit.score > earlier.hit.score else earlier.hit
                merged[hit.chunk.chunk_id] = MergedHit(best, [*earlier.queries, number])
    return sorted(merged.values(), key=lambda found: (-found.hit.score, found.hit.chunk.chunk_id))
