"""The quality benchmark reuses its baselines' vectors only for the texts and model they were made from."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

import quality  # noqa: E402


def test_baseline_vectors_are_reused_only_while_the_texts_are_the_same(tmp_path: Path, embedder):
    index, cache = tmp_path / "idx", tmp_path / "idx-naive.npz"
    texts = ["Polonium was discovered in 1898.", "The Seine flows through Paris."]

    first = quality.baseline_vectors(index, "naive", texts, embedder)
    np.testing.assert_allclose(first, embedder.encode_documents(texts), atol=1e-6)
    written = cache.stat().st_mtime_ns

    again = quality.baseline_vectors(index, "naive", texts, embedder)
    np.testing.assert_array_equal(again, first)
    assert cache.stat().st_mtime_ns == written

    edited = [texts[0], "The Danube flows through Vienna."]
    changed = quality.baseline_vectors(index, "naive", edited, embedder)
    np.testing.assert_allclose(changed, embedder.encode_documents(edited), atol=1e-6)
    assert not np.allclose(changed[1], first[1])
