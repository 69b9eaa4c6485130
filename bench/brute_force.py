"""The tools' definitions computed the slow, obvious way: what tests and benchmarks check them against.

Each function ranks chunks as a tool's contract says, over data held in memory, with ties broken
by chunk id; the tools must return the same ids and scores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import regex
from arag_mcp.indexer.terms import fold, unspaced


def keyword_ranking(
    chunk_ids: Sequence[str], texts: Sequence[str], keywords: Sequence[str], top_k: int
) -> list[tuple[str, int]]:
    """The paper's keyword search: Σ count(keyword, lower-cased text) · len(keyword) per chunk,
    keywords stripped, lower-cased and counted once; chunks scoring 0 are left out."""
    terms = list(dict.fromkeys(k.strip().lower() for k in keywords if k.strip()))
    scored = []
    for cid, text in zip(chunk_ids, texts):
        lowered = text.lower()
        score = sum(lowered.count(term) * len(term) for term in terms)
        if score:
            scored.append((-score, cid))
    return [(cid, -score) for score, cid in sorted(scored)[:top_k]]


def folded_words(text: str) -> list[str]:
    """Whole-word matching's words: runs of letters, digits and '_' in the lower-cased text, folded."""
    return [fold(word) for word in regex.split(r"[^\p{L}\p{N}_]+", text.lower()) if word]


class WordCorpus:
    """Every chunk's title and text as folded words, made once, so that many keyword sets can be
    ranked by keyword_search's default definition without folding the corpus again for each."""

    def __init__(self, chunk_ids: Sequence[str], titles: Sequence[str], texts: Sequence[str]) -> None:
        self.chunk_ids = list(chunk_ids)
        self.fields = [(folded_words(title), folded_words(text)) for title, text in zip(titles, texts)]
        self.words = [Counter(title) + Counter(text) for title, text in self.fields]

    def ranking(self, keywords: Sequence[str], top_k: int) -> list[tuple[str, int]]:
        """keyword_search's default definition: Σ count · len(keyword) per chunk, where count is how
        often the keyword's folded words occur as consecutive words of the chunk's title or of its
        text (keywords stripped, counted once per word sequence, the first spelling's length); a
        keyword's word with letters of a script written without spaces occurs in every word that
        holds it, and a keyword of that one word counts each time a word holds it. When
        top_k >= the number of keywords, each matching keyword's best chunk (the highest-scoring
        chunk it matches; ties: chunk id) is kept, the remaining places going by score; the result
        is ordered by score."""
        terms: dict[tuple[str, ...], str] = {}
        for keyword in keywords:
            if keyword.strip():
                terms.setdefault(tuple(folded_words(keyword)), keyword.strip())
        counts: dict[tuple[str, ...], dict[str, int]] = {words: {} for words in terms}
        scores = {}
        for cid, fields, present in zip(self.chunk_ids, self.fields, self.words):
            score = 0
            for words, keyword in terms.items():
                if not words or any(word not in present for word in words if not unspaced(word)):
                    continue
                if len(words) == 1 and unspaced(words[0]):
                    count = sum(word.count(words[0]) for field in fields for word in field)
                else:
                    count = sum(
                        1
                        for field in fields
                        for at in range(len(field) - len(words) + 1)
                        if all(
                            wanted in word if unspaced(wanted) else wanted == word
                            for wanted, word in zip(words, field[at : at + len(words)])
                        )
                    )
                if count:
                    counts[words][cid] = count
                score += count * len(keyword)
            if score:
                scores[cid] = score
        ranked = sorted(scores, key=lambda cid: (-scores[cid], cid))
        chosen = ranked[:top_k]
        if top_k >= len(terms):
            bests = [min(found, key=lambda cid: (-scores[cid], cid)) for found in counts.values() if found]
            kept = list(dict.fromkeys(bests))
            chosen = kept + [cid for cid in ranked if cid not in kept][: top_k - len(kept)]
        return [(cid, scores[cid]) for cid in sorted(chosen, key=lambda cid: (-scores[cid], cid))]


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
