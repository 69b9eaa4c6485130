"""Exact semantic search from the in-memory matrix (indexer/vectors.py) against brute force, its
reuse across builds, a live server following a new build, and the IVF-PQ path above the threshold."""

from __future__ import annotations

import dataclasses
import logging
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index import vectors
from arag_mcp.indexer.index.ids import chunk_id, doc_key
from arag_mcp.indexer.index.manifest import Manifest
from arag_mcp.indexer.index.schema import chunks_schema, documents_schema, sentences_schema
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.index.vectors import SentenceMatches
from arag_mcp.indexer.index.writer import IndexWriter
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.search import retrieval

from .conftest import HASHED_MODEL, SAMPLE, live_index

HASHED = BuildOptions(model=HASHED_MODEL, progress=False)
QUESTIONS = ["Which element was named after Poland?", "How did Pierre Curie die?", "Who founded the university?"]


def brute_force(snapshot, query: np.ndarray, limit: int) -> tuple[list[tuple[str, int]], np.ndarray]:
    """(chunk id, position) of the `limit` highest dot products over every vector of the table, and those products."""
    table = snapshot.sentences.table.to_arrow()
    matrix = np.stack(table["vector"].to_numpy(zero_copy_only=False))
    scores = matrix @ query
    order = np.argsort(-scores, kind="stable")[:limit]
    keys = list(zip(table["chunk_id"].to_pylist(), table["position"].to_pylist()))
    return [keys[i] for i in order], scores[order]


def found(nearest: SentenceMatches | pa.Table, snapshot=None) -> list[tuple[str, int]]:
    """(chunk id, position) of each sentence found: a LanceDB result, or matches named by chunk number."""
    if isinstance(nearest, pa.Table):
        return list(zip(nearest["chunk_id"].to_pylist(), nearest["position"].to_pylist()))
    ids = snapshot.catalogue.chunk_ids.take(pa.array(nearest.chunk_numbers)).to_pylist()
    return list(zip(ids, nearest.positions.tolist()))


def write_synthetic(uri: Path, matrix: np.ndarray, per_chunk: int = 10) -> None:
    """An index of len(matrix) sentences with these vectors, written through the indexer's IndexWriter."""
    writer = IndexWriter(str(uri), matrix.shape[1], None, rebuild=True)
    chunk_rows, sentence_rows, document_rows = [], [], []
    for number in range(len(matrix) // per_chunk):
        key = doc_key(f"doc-{number}")
        texts = [f"Sentence {position} of document {number}." for position in range(per_chunk)]
        chunk_rows.append(
            {
                "chunk_id": chunk_id(key, 0),
                "doc_key": key,
                "doc_id": f"doc-{number}",
                "doc_hash": f"hash-{number}",
                "title": f"Document {number}",
                "source": "synthetic",
                "part": 0,
                "parts": 1,
                "text": " ".join(texts),
                "tokens": 10 * per_chunk,
                "sentence_starts": [],
                "sentence_ends": [],
                "metadata": "",
            }
        )
        sentence_rows += [
            {"chunk_id": chunk_id(key, 0), "doc_key": key, "position": i, "text": text, "start": 0, "end": 1}
            for i, text in enumerate(texts)
        ]
        document_rows.append(
            {
                "doc_id": f"doc-{number}",
                "doc_key": key,
                "doc_hash": f"hash-{number}",
                "chunks": 1,
                "sentences": per_chunk,
            }
        )
    schema = sentences_schema(matrix.shape[1])
    sentences = pa.Table.from_pylist(sentence_rows, schema=schema.remove(schema.get_field_index("vector")))
    sentences = sentences.append_column(
        schema.field("vector"), pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])
    )
    writer.add(
        pa.Table.from_pylist(chunk_rows, schema=chunks_schema()),
        sentences,
        pa.Table.from_pylist(document_rows, schema=documents_schema()),
    )
    embedding = {
        "model": "synthetic",
        "embedding_backend": "onnx",
        "dimension": matrix.shape[1],
        "query_prompt": "",
        "document_prompt": "",
        "chunk_tokens": 1000,
        "sentence_tokens": 224,
        "splitter": "synthetic",
        "sentence_context": "synthetic",
    }
    record = Manifest.record(writer.uri, embedding=embedding)
    writer.commit(dataclasses.replace(record, vector_index=writer.finish_tables(), built_at="synthetic"), {})


def clustered(count: int, seed: int) -> np.ndarray:
    """Unit vectors around 500 random centres: structure like sentence embeddings', no model needed."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(500, 384)).astype(np.float32)
    matrix = centres[rng.integers(0, 500, count)] + rng.normal(0, 0.05, (count, 384)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_exact_search_returns_what_brute_force_finds(sample_index, embedder):
    snapshot = open_index(str(sample_index))
    assert snapshot.sentences.in_memory is not None
    total = snapshot.sentences.table.count_rows()
    for question in QUESTIONS:
        query = embedder.encode_queries([question])[0]
        expected, scores = brute_force(snapshot, query, 20)
        nearest = snapshot.sentences.nearest(query, 20)
        assert found(nearest, snapshot) == expected
        assert nearest.similarities == pytest.approx(scores, abs=1e-6)
        flat = snapshot.sentences.table.search(query).distance_type("dot").limit(20).select(["chunk_id", "position"])
        assert found(nearest, snapshot) == found(flat.to_arrow())
    assert len(snapshot.sentences.nearest(query, total + 50)) == total


def test_exact_search_of_a_larger_index_matches_brute_force(tmp_path: Path):
    matrix = clustered(60_000, seed=1)
    write_synthetic(tmp_path / "idx", matrix)
    snapshot = open_index(str(tmp_path / "idx"))
    assert snapshot.sentences.in_memory is not None
    answers = []
    for query in clustered(5, seed=2):
        expected, scores = brute_force(snapshot, query, 100)
        nearest = snapshot.sentences.nearest(query, 100)
        assert found(nearest, snapshot) == expected
        assert nearest.similarities == pytest.approx(scores, abs=1e-6)
        answers.append(nearest)
    shutil.rmtree(tmp_path / "idx" / "sentences.lance")  # answered from memory: no storage read
    for query, answer in zip(clustered(5, seed=2), answers):
        assert snapshot.sentences.nearest(query, 100) == answer


def test_a_scoped_exact_search_is_brute_force_over_the_scope(tmp_path: Path):
    """Past QUANTISED_MIN_ROWS the int8 candidates are chosen among the scope's sentences only."""
    matrix = clustered(vectors.QUANTISED_MIN_ROWS + 4_000, seed=3)
    write_synthetic(tmp_path / "idx", matrix)
    snapshot = open_index(str(tmp_path / "idx"))
    scope = np.random.default_rng(4).random(snapshot.chunk_count) < 0.05
    table = snapshot.sentences.table.to_arrow()
    numbers = snapshot.catalogue.numbers_of(table["chunk_id"].to_pylist())
    inside = scope[numbers]
    keys = list(zip(table["chunk_id"].to_pylist(), table["position"].to_pylist()))
    matrix = np.stack(table["vector"].to_numpy(zero_copy_only=False))
    for query in clustered(5, seed=5):
        scores = np.where(inside, matrix @ query, -np.inf)
        order = np.argsort(-scores, kind="stable")[:30]
        nearest = snapshot.sentences.nearest(query, 30, scope)
        assert found(nearest, snapshot) == [keys[i] for i in order]
        assert nearest.similarities == pytest.approx(scores[order], abs=1e-6)


def test_a_new_build_reuses_the_vectors_of_unchanged_documents(tmp_path: Path, hashed_embedder, caplog):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    index = str(tmp_path / "idx")
    Index(index).add([corpus], HASHED)
    first = open_index(index)
    first.sentences.in_memory.load()

    pierre = (corpus / "pierre-curie.md").read_text()
    (corpus / "pierre-curie.md").write_text(pierre.replace("horse-drawn", "heavy horse-drawn"))
    (corpus / "university-of-paris.txt").unlink()
    (corpus / "einsteinium.md").write_text("# Einsteinium\n\nEinsteinium was found in the debris of the Ivy Mike test.")
    Index(index).add([corpus], HASHED)

    with caplog.at_level(logging.INFO, logger=vectors.__name__):
        second = open_index(index, previous=first)
        second.sentences.in_memory.load()
    documents = second.chunks.table.to_arrow()
    changed = {
        key
        for key, title in zip(documents["doc_key"].to_pylist(), documents["title"].to_pylist())
        if title in ("Pierre Curie", "Einsteinium")
    }
    assert len(changed) == 2
    sentences = second.sentences.table.to_arrow()
    fresh = sum(key in changed for key in sentences["doc_key"].to_pylist())
    assert 0 < fresh < sentences.num_rows
    assert f"{sentences.num_rows - fresh} reused from the previous build, {fresh} read" in caplog.text

    reopened = open_index(index)
    for question in [*QUESTIONS, "What was found in the Ivy Mike debris?"]:
        query = hashed_embedder.encode_queries([question])[0]
        reused = second.sentences.nearest(query, sentences.num_rows)
        assert reused == reopened.sentences.nearest(query, sentences.num_rows)
        assert found(reused, second)[:10] == brute_force(second, query, 10)[0]


def test_settings_that_change_vectors_prevent_reuse(sample_index, caplog):
    first = open_index(str(sample_index))
    first.sentences.in_memory.load()
    total = first.sentences.table.count_rows()
    for settings, reused in [({}, total), ({"sentence_context": "another"}, 0)]:
        caplog.clear()
        manifest = dataclasses.replace(first.manifest, **settings)
        again = vectors.SentenceVectors(
            first.sentences.table, first.chunks.table, first.catalogue, manifest, first.sentences.in_memory
        )
        with caplog.at_level(logging.INFO, logger=vectors.__name__):
            again.load()
        assert f"{reused} reused from the previous build, {total - reused} read" in caplog.text


def test_live_index_follows_a_new_build_with_exact_search(tmp_path: Path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    index = str(tmp_path / "idx")
    Index(index).add([corpus], HASHED)
    with live_index(index, reload_seconds=0.0) as live:
        question = "What was found in the debris of the Ivy Mike test?"
        before = live.snapshot()
        hits = retrieval.semantic_search(before, live.query_vectors(before, [question], 60)[0], top_k=3)
        assert "Einsteinium" not in [hit.chunk.title for hit in hits]

        (corpus / "einsteinium.md").write_text(
            "# Einsteinium\n\nEinsteinium was found in the debris of the Ivy Mike test."
        )
        Index(index).add([corpus], HASHED)
        after = live.snapshot()
        assert after is not before and after.sentences.in_memory is not None
        hits = retrieval.semantic_search(after, live.query_vectors(after, [question], 60)[0], top_k=3)
        assert hits[0].chunk.title == "Einsteinium"


def test_above_the_threshold_the_vector_index_answers(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(vectors, "VECTOR_INDEX_MIN_ROWS", 5_000)
    matrix = clustered(8_000, seed=3)
    write_synthetic(tmp_path / "idx", matrix)
    snapshot = open_index(str(tmp_path / "idx"))
    assert snapshot.manifest.vector_index["type"] == "IVF_PQ"
    assert snapshot.sentences.in_memory is None
    recalls = []
    rng = np.random.default_rng(4)
    for query in matrix[rng.integers(0, len(matrix), 10)] + rng.normal(0, 0.05, (10, 384)).astype(np.float32):
        query /= np.linalg.norm(query)
        expected, _ = brute_force(snapshot, query, 10)
        nearest = snapshot.sentences.nearest(query, 10)
        assert np.all(np.diff(nearest.similarities) <= 0)
        recalls.append(len(set(found(nearest, snapshot)) & set(expected)) / 10)
    assert np.mean(recalls) >= 0.9
