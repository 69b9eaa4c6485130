"""How keyword_search turns a chunk's keyword counts into its score.

- `RarityWeights` (whole-word matching, the default): BM25. A keyword's weight in a chunk is
  idf · tf·(K1+1) / (tf + K1·(1 − B + B·length/average length)), summed over the keywords, so a
  keyword found in few chunks outweighs one found in many, and repeating a word saturates instead
  of adding up. The document frequency behind idf is counted within the chunks searched (the
  scope), from the postings alone: the chunks that hold every word of the keyword, which for a
  keyword of several words may be more than the chunks holding them in a row (counting those would
  mean reading every such chunk's text).
- `LengthWeights` (substring matching): the A-RAG paper's Σ count · len(keyword).

A weight only grows with the count (each float operation is monotone), so an upper bound on a
count bounds the score: what keyword_search's exact top k relies on. Scores are summed keyword by
keyword in the order given; definition.py computes them with the same operations in the
same order, so both agree to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

K1 = 1.2
"""How fast a keyword's weight saturates with its count in a chunk."""
B = 0.75
"""How much a chunk's length (its tokens, as the index records them) discounts its counts."""


class Weights(Protocol):
    dtype: type
    """Of the scores: exact integers for the paper's, floats for BM25's."""

    def score(self, counts: Sequence[np.ndarray], numbers: np.ndarray) -> np.ndarray:
        """Scores of the chunks `numbers`, given each keyword's counts in them (aligned with `numbers`)."""
        ...


def idf(chunks: int, holding: int) -> float:
    """BM25's inverse document frequency, never negative: ln(1 + (N − df + 0.5) / (df + 0.5))."""
    return math.log(1 + (chunks - holding + 0.5) / (holding + 0.5))


def average_length(total: int, chunks: int) -> float:
    """The average chunk length (1 when there is none to average)."""
    return total / chunks if total else 1.0


class RarityWeights:
    """BM25 scores over the chunks searched."""

    dtype = np.float64

    def __init__(self, lengths: np.ndarray, holding: Sequence[int], scope: np.ndarray | None) -> None:
        """`lengths`: every chunk's length by chunk number; `holding`: per keyword, the chunks in
        the scope (a mask; None: every chunk) that hold all its words."""
        chunks = len(lengths) if scope is None else int(np.count_nonzero(scope))
        total = int(lengths.sum() if scope is None else lengths[scope].sum())
        self.idfs = [idf(chunks, count) for count in holding]
        self.lengths = lengths
        self.average = average_length(total, chunks)

    def norms(self, numbers: np.ndarray) -> np.ndarray:
        """The count that gives these chunks half a keyword's full weight: K1, scaled by length."""
        return K1 * (1 - B + B * self.lengths[numbers] / self.average)

    def score(self, counts: Sequence[np.ndarray], numbers: np.ndarray) -> np.ndarray:
        norms = self.norms(numbers)
        total = np.zeros(len(numbers), dtype=self.dtype)
        for weight, count in zip(self.idfs, counts):
            total += weight * (count * (K1 + 1) / (count + norms))
        return total


class LengthWeights:
    """The paper's scores: Σ count · len(keyword)."""

    dtype = np.int64

    def __init__(self, lengths: Sequence[int]) -> None:
        """`lengths`: each keyword's length in characters."""
        self.lengths = lengths

    def score(self, counts: Sequence[np.ndarray], numbers: np.ndarray) -> np.ndarray:
        total = np.zeros(len(numbers), dtype=self.dtype)
        for length, count in zip(self.lengths, counts):
            total += count * length
        return total
