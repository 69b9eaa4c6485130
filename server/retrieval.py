"""The A-RAG retrieval operations as plain functions over an index snapshot.

Nothing here knows about MCP: the server layer validates arguments, tracks what a session has
read and renders results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from arag_mcp.indexer.ids import chunk_id, parse_chunk_id

if TYPE_CHECKING:
    from arag_mcp.indexer.store import IndexSnapshot

SNIPPET_SEPARATOR = " ... "
MATCHED_SENTENCES = 3


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: str
    title: str
    source: str
    score: int
    snippet: list[str]


@dataclass(frozen=True)
class SemanticHit:
    chunk_id: str
    title: str
    source: str
    score: float
    sentences: list[str]


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    title: str
    source: str
    text: str
    previous_chunk_id: str | None
    next_chunk_id: str | None


def normalise_keywords(keywords: Sequence[str]) -> list[str]:
    """Lower-cased, stripped, de-duplicated keywords in the order given."""
    return list(dict.fromkeys(k.strip().lower() for k in keywords if k.strip()))


def keyword_scores(texts: pa.Array, keywords: Sequence[str]) -> np.ndarray:
    """Σ_k count(k, text) · len(k) for each text, matching lower-cased literal substrings."""
    lowered = pc.utf8_lower(texts)
    scores = np.zeros(len(texts), dtype=np.int64)
    for keyword in keywords:
        counts = pc.count_substring(lowered, pattern=keyword).to_numpy(zero_copy_only=False)
        scores += counts.astype(np.int64) * len(keyword)
    return scores


def keyword_search(snapshot: IndexSnapshot, keywords: Sequence[str], top_k: int) -> list[KeywordHit]:
    """Chunks ranked by keyword score (ties: chunk id), with the sentences that contain a keyword."""
    terms = normalise_keywords(keywords)
    if not terms:
        return []
    best_ids: list[str] = []
    best_scores: list[int] = []
    for batch in snapshot.scan_chunks(["chunk_id", "text"]):
        scores = keyword_scores(batch.column("text"), terms)
        matched = np.flatnonzero(scores)
        if matched.size:
            ids = batch.column("chunk_id").take(pa.array(matched)).to_pylist()
            best_ids.extend(ids)
            best_scores.extend(scores[matched].tolist())
            best_ids, best_scores = _top(best_ids, best_scores, top_k)
    rows = snapshot.chunk_rows(best_ids, ["title", "source", "text", "sentence_starts", "sentence_ends"])
    hits = []
    for cid, score in zip(best_ids, best_scores):
        row = rows[cid]
        hits.append(KeywordHit(cid, row["title"], row["source"], score, _matching_sentences(row, terms)))
    return hits


def _top(ids: list[str], scores: list[int], k: int) -> tuple[list[str], list[int]]:
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:k]
    return [ids[i] for i in order], [scores[i] for i in order]


def _matching_sentences(row: dict, terms: Sequence[str]) -> list[str]:
    text = row["text"]
    sentences = (text[start:end] for start, end in zip(row["sentence_starts"], row["sentence_ends"]))
    return [sentence for sentence in sentences if any(term in sentence.lower() for term in terms)]


def semantic_search(snapshot: IndexSnapshot, query_vector: np.ndarray, top_k: int) -> list[SemanticHit]:
    """Chunks ranked by their best sentence's cosine similarity to the query.

    The nearest `candidate_pool(top_k)` sentences are grouped by chunk; a chunk's matched
    sentences are its best `MATCHED_SENTENCES` among them, shown in document order.
    """
    pool = candidate_pool(top_k)
    total = snapshot.manifest["counts"]["sentences"]
    while True:
        nearest = snapshot.nearest_sentences(query_vector, pool, ["chunk_id", "ordinal", "text"])
        grouped = group_by_chunk(nearest)
        if len(grouped) >= top_k or pool >= total:
            break
        pool *= 4
    ranked = sorted(grouped.items(), key=lambda item: (-item[1][0], item[0]))[:top_k]
    rows = snapshot.chunk_rows([cid for cid, _ in ranked], ["title", "source"])
    return [
        SemanticHit(cid, rows[cid]["title"], rows[cid]["source"], score, best_sentences(sentences))
        for cid, (score, sentences) in ranked
        if cid in rows
    ]


def candidate_pool(top_k: int) -> int:
    """How many nearest sentences are considered for `top_k` chunks."""
    return max(50, 10 * top_k)


def best_sentences(sentences: list[tuple[float, int, str]]) -> list[str]:
    """Texts of the `MATCHED_SENTENCES` most similar sentences, in document order."""
    best = sorted(sentences, key=lambda item: (-item[0], item[1]))[:MATCHED_SENTENCES]
    return [text for _, _, text in sorted(best, key=lambda item: item[1])]


def group_by_chunk(nearest: pa.Table) -> dict[str, tuple[float, list[tuple[float, int, str]]]]:
    """chunk id → (best similarity, [(similarity, sentence ordinal, text), ...]) from nearest sentences."""
    grouped: dict[str, tuple[float, list[tuple[float, int, str]]]] = {}
    similarities = (
        (1.0 - nearest["_distance"].to_numpy()).tolist() if nearest.num_rows else []
    )  # dot distance = 1 - cos
    for cid, ordinal, text, score in zip(
        nearest["chunk_id"].to_pylist(), nearest["ordinal"].to_pylist(), nearest["text"].to_pylist(), similarities
    ):
        best, sentences = grouped.get(cid, (score, []))
        sentences.append((score, ordinal, text))
        grouped[cid] = (max(best, score), sentences)
    return grouped


def read_chunks(snapshot: IndexSnapshot, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
    """Full text and neighbour ids of the chunks with these ids (unknown ids are absent)."""
    wanted = [cid for cid in chunk_ids if parse_chunk_id(cid)]
    rows = snapshot.chunk_rows(wanted, ["title", "source", "text", "doc_key", "ordinal", "doc_chunks"])
    chunks = {}
    for cid, row in rows.items():
        ordinal, count = row["ordinal"], row["doc_chunks"]
        chunks[cid] = Chunk(
            cid,
            row["title"],
            row["source"],
            row["text"],
            chunk_id(row["doc_key"], ordinal - 1) if ordinal > 0 else None,
            chunk_id(row["doc_key"], ordinal + 1) if ordinal + 1 < count else None,
        )
    return chunks
