"""CountsByChunk against the same arithmetic on a count for every chunk."""

from __future__ import annotations

import numpy as np
import pytest
from arag_mcp.indexer.index.keywords.counts_by_chunk import CountsByChunk, union

CHUNKS = 200


def dense(counts: CountsByChunk) -> np.ndarray:
    full = np.zeros(CHUNKS, dtype=np.int64)
    full[counts.numbers] = counts.counts
    return full


def random_counts(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(numbers, counts) in any order, repeated, some counts 0."""
    return rng.integers(0, CHUNKS, size), rng.integers(0, 4, size)


@pytest.mark.parametrize("seed", range(20))
def test_operations_equal_their_dense_forms(seed: int):
    rng = np.random.default_rng(seed)
    (n1, c1), (n2, c2) = random_counts(rng, rng.integers(0, 300)), random_counts(rng, rng.integers(0, 30))
    first, second = CountsByChunk.summed(n1, c1), CountsByChunk.summed(n2, c2)
    expected_first = np.bincount(n1, weights=c1, minlength=CHUNKS).astype(np.int64)
    assert (dense(first) == expected_first).all()
    for counts in (first, second):
        assert (np.diff(counts.numbers) > 0).all() and (counts.counts != 0).all()
    assert (dense(first.plus(second)) == dense(first) + dense(second)).all()
    assert (dense(second.plus(first)) == dense(first) + dense(second)).all()
    low = first.minimum(second)
    assert (dense(low) == np.minimum(dense(first), dense(second))).all()
    assert (low.counts != 0).all()
    scope = rng.random(CHUNKS) < 0.5
    assert (dense(first.within(scope)) == np.where(scope, dense(first), 0)).all()
    asked = rng.integers(0, CHUNKS, 50)
    assert (first.at(asked) == dense(first)[asked]).all()
    everything = np.flatnonzero(dense(first) | dense(second))
    assert (union([first.numbers, second.numbers], CHUNKS) == everything).all()
    assert (union([first.numbers, second.numbers], 10**9) == everything).all()  # by sorting, not by a mask


def test_empty_counts():
    none = CountsByChunk.none()
    some = CountsByChunk.summed(np.array([3, 1]), np.array([2, 5]))
    assert (dense(none.plus(some)) == dense(some)).all()
    assert len(none.minimum(some)) == 0
    assert (none.at(np.array([1, 3])) == 0).all()
    assert len(union([], CHUNKS)) == 0
