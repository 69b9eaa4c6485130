"""ONNX Runtime embedding: the same vectors, tokens and prompts as sentence-transformers, or a fallback.

The default model's encoder is written from its weights without torch (bert_graph.py); these tests
compare it with sentence-transformers, which the test extra installs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.embedding.embedder import Embedder
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index

from .conftest import SAMPLE, run_cli

TEXTS = [
    "Pierre Curie: Pierre Curie was a French physicist, a pioneer in crystallography and magnetism.",
    "He shared the 1903 Nobel Prize in Physics with his wife, Marie Skłodowska-Curie.",
    "  Radium (Ra) — discovered in 1898 — glows faintly blue in the dark.  ",
    "東京は日本の首都です。",
    "ok",
    "A sentence long enough to be cut at the model's window of 256 tokens. " * 40,
]


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    return Embedder(backend="torch").load()


def test_onnx_matches_sentence_transformers(torch_embedder: Embedder, embedder: Embedder):
    assert embedder.backend == "onnx"
    for kind in ("documents", "queries"):
        expected = getattr(torch_embedder, f"encode_{kind}")(TEXTS)
        actual = getattr(embedder, f"encode_{kind}")(TEXTS)
        assert actual.dtype == np.float32 and actual.shape == expected.shape
        assert np.max(np.abs(actual - expected)) < 1e-5
    assert embedder.count_tokens(TEXTS) == torch_embedder.count_tokens(TEXTS)
    assert embedder.token_offsets(TEXTS[2]) == torch_embedder.token_offsets(TEXTS[2])
    assert (embedder.dimension, embedder.max_tokens) == (torch_embedder.dimension, torch_embedder.max_tokens)
    assert embedder.prompt("query") == torch_embedder.prompt("query")


def test_int8_stays_close_to_the_original(torch_embedder: Embedder):
    int8 = Embedder(backend="onnx-int8").load()
    assert int8.backend == "onnx-int8"
    cosines = np.sum(int8.encode_documents(TEXTS) * torch_embedder.encode_documents(TEXTS), axis=1)
    assert cosines.min() > 0.95
    assert not np.allclose(cosines, 1.0, atol=1e-5)  # really the quantised weights


def test_unexportable_model_falls_back_to_torch(tmp_path: Path, torch_embedder: Embedder):
    """A pipeline with a Dense layer is not what the export handles: torch embeds it, and says so."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    original = torch_embedder.encoder.model
    model = SentenceTransformer(modules=[original[0], original[1], Dense(384, 64), Normalize()], device="cpu")
    model.save(str(tmp_path / "dense-model"))
    fallback = Embedder(str(tmp_path / "dense-model")).load()
    assert fallback.backend == "torch"
    vectors = fallback.encode_documents(TEXTS[:2])
    assert vectors.shape == (2, 64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_manifest_records_backend_and_extension_keeps_it(tmp_path: Path):
    index = tmp_path / "idx"
    Index(str(index)).add([SAMPLE / "pierre-curie.md"], BuildOptions(progress=False, backend="torch"))
    assert open_index(str(index)).manifest.embedding_backend == "torch"
    added = run_cli("arag_mcp.indexer", "add", str(SAMPLE / "marie-curie.md"), "--index", str(index), "--quiet")
    assert added.returncode == 0, added.stderr  # without --backend, the index's own
    assert open_index(str(index)).manifest.embedding_backend == "torch"
    result = run_cli("arag_mcp.indexer", "build", str(SAMPLE), "--index", str(index), "--backend", "onnx", "--quiet")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    error = [line for line in result.stderr.splitlines() if line.startswith("arag-index: error:")]
    assert len(error) == 1 and "--backend torch" in error[0] and "--rebuild" in error[0]
    assert open_index(str(index)).manifest.counts.documents == 2
    rebuilt = run_cli("arag_mcp.indexer", "build", str(SAMPLE), "--index", str(index), "--rebuild", "--quiet")
    assert rebuilt.returncode == 0, rebuilt.stderr
    info = json.loads(run_cli("arag_mcp.indexer", "info", "--index", str(index)).stdout)
    assert info["embedding_backend"] == "onnx" and info["counts"]["documents"] > 1
