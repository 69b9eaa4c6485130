"""Two indexes hold the same build: chunks, words, documents, sentences, vectors within float
tolerance and counts; and a corpus large enough to spread over workers."""

from __future__ import annotations

import shutil
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.index.schema import CHUNKS, DOCUMENTS, SENTENCES

from ..conftest import SAMPLE


def corpus_with_notes(folder: Path, notes: int) -> Path:
    """The sample corpus and `notes` small text files: enough batches to kill a build between them."""
    shutil.copytree(SAMPLE, folder)
    write_notes(folder, notes)
    return folder


def write_notes(folder: Path, notes: int) -> None:
    for number in range(notes):
        (folder / f"note-{number:03}.txt").write_text(
            f"Note {number} is about element {number}. It was found in {1800 + number}. "
            f"Its discoverer wrote {number % 7} papers about it."
        )


def committed_table(index: str | Path, name: str, key: list[str]) -> pa.Table:
    """A table of the committed index, sorted by `key`."""
    version = read_manifest(str(index))["tables"][name]
    table = lancedb.connect(str(index)).open_table(name)
    table.checkout(version)
    return table.to_arrow().sort_by([(column, "ascending") for column in key])


def _words(chunks: pa.Table) -> list[list[tuple[str, int]]]:
    """Each chunk's words and counts, in word order (a build lists them in any order)."""
    return [sorted(zip(*pair)) for pair in zip(chunks["terms"].to_pylist(), chunks["term_counts"].to_pylist())]


def assert_same_index(built: str | Path, expected: str | Path) -> None:
    """Same chunks (ids, texts, words), documents and sentences, vectors equal within float tolerance."""
    chunks, want = committed_table(built, CHUNKS, ["chunk_id"]), committed_table(expected, CHUNKS, ["chunk_id"])
    assert chunks.drop_columns(["chunk_id"]).column_names == want.drop_columns(["chunk_id"]).column_names
    for column in ("chunk_id", "text", "doc_id", "part", "parts", "sentence_starts"):
        assert chunks[column].to_pylist() == want[column].to_pylist(), column
    assert _words(chunks) == _words(want)
    documents, want_documents = (
        committed_table(built, DOCUMENTS, ["doc_id"]),
        committed_table(expected, DOCUMENTS, ["doc_id"]),
    )
    for column in ("doc_id", "doc_hash", "chunks", "sentences"):
        assert documents[column].to_pylist() == want_documents[column].to_pylist(), column
    sentences = committed_table(built, SENTENCES, ["chunk_id", "position"])
    want_sentences = committed_table(expected, SENTENCES, ["chunk_id", "position"])
    assert sentences["text"].to_pylist() == want_sentences["text"].to_pylist()
    np.testing.assert_allclose(
        np.stack(sentences["vector"].to_numpy(zero_copy_only=False)),
        np.stack(want_sentences["vector"].to_numpy(zero_copy_only=False)),
        atol=1e-5,
    )
    counts = read_manifest(str(built))["counts"]
    assert counts == read_manifest(str(expected))["counts"]
