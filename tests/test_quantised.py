"""Int8 preselection (indexer/quantised.py): its candidates always hold the exact top k."""

from __future__ import annotations

import numpy as np
import pytest
from arag_mcp.indexer.index.quantised import QuantisedScorer


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def exact_top(vectors: np.ndarray, query: np.ndarray, limit: int) -> set[int]:
    """The rows scoring at least the `limit`-th best exact dot product (ties included)."""
    scores = vectors @ query
    return set(np.flatnonzero(scores >= np.sort(scores)[-limit]).tolist())


@pytest.mark.parametrize("limit", [1, 10, 100])
def test_candidates_hold_the_exact_top_k(limit):
    rng = np.random.default_rng(0)
    centres = unit(rng.standard_normal((20, 384)))
    vectors = unit(centres[rng.integers(0, 20, 6000)] + rng.normal(0, 0.08, (6000, 384)))
    vectors[100:110] = vectors[5]  # exact duplicates tie
    scorer = QuantisedScorer(vectors)
    sizes = []
    for query in unit(centres[rng.integers(0, 20, 30)] + rng.normal(0, 0.05, (30, 384))):
        found = scorer.candidates(query, limit)
        assert exact_top(vectors, query, limit) <= set(found.tolist())
        sizes.append(len(found))
    assert np.median(sizes) < len(vectors) / 4  # a preselection, not the whole matrix


def test_a_query_equal_to_a_row_finds_that_row_and_its_duplicates():
    rng = np.random.default_rng(1)
    vectors = unit(rng.standard_normal((5000, 384)))
    vectors[7] = vectors[4000]
    scorer = QuantisedScorer(vectors)
    assert {4000, 7} <= set(scorer.candidates(vectors[4000], 1).tolist())


def test_zero_rows_and_a_zero_query_are_handled():
    rng = np.random.default_rng(2)
    vectors = unit(rng.standard_normal((5000, 384)))
    vectors[:3] = 0.0
    scorer = QuantisedScorer(vectors)
    query = unit(rng.standard_normal((1, 384)))[0]
    assert exact_top(vectors, query, 5) <= set(scorer.candidates(query, 5).tolist())
    assert len(scorer.candidates(np.zeros(384, np.float32), 5)) == len(vectors)  # every score ties at 0


@pytest.mark.parametrize("share", [0.002, 0.05, 0.5])
def test_candidates_within_allowed_rows_hold_their_exact_top_k(share):
    """A scope: the top k among the allowed rows, which mostly lie outside the global top k."""
    rng = np.random.default_rng(3)
    centres = unit(rng.standard_normal((20, 384)))
    vectors = unit(centres[rng.integers(0, 20, 6000)] + rng.normal(0, 0.08, (6000, 384)))
    scorer = QuantisedScorer(vectors)
    allowed = rng.random(len(vectors)) < share
    rows = np.flatnonzero(allowed)
    for query in unit(centres[rng.integers(0, 20, 20)] + rng.normal(0, 0.05, (20, 384))):
        limit = min(10, len(rows))
        found = set(scorer.candidates(query, limit, allowed).tolist())
        assert found <= set(rows.tolist())
        assert {int(rows[at]) for at in exact_top(vectors[rows], query, limit)} <= found
