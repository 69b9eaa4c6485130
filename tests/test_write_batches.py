"""Documents longer than a write batch are written whole; a build refuses to commit one written in
part; an index an earlier build damaged is repaired by the next sync. Real files, real LanceDB, the
model of hashed words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.completeness import IncompleteWrite
from arag_mcp.indexer.index.manifest import check_manifest, read_manifest, write_manifest
from arag_mcp.indexer.index.schema import CHUNKS, DOCUMENTS, SENTENCES, chunks_schema, documents_schema
from arag_mcp.indexer.index.snapshot import list_documents, open_index
from arag_mcp.indexer.index.writer import IndexWriter
from arag_mcp.indexer.indexes import Index

from .conftest import HASHED_MODEL, run_cli

WORDS = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda")
ONE_BATCH = 1 << 30


def _document(name: str, sentences: int) -> str:
    """`sentences` short sentences, the last one naming the document: lost if the end is lost."""
    body = " ".join(f"Line {i} of {name} mentions {WORDS[i % len(WORDS)]}." for i in range(sentences - 1))
    return f"{body} The last line of {name} says {name}end.".strip()


def _corpus(folder: Path, batch: int) -> Path:
    """Documents of 1x, 2.5x and 10x the write batch (in sentences) and a small one."""
    folder.mkdir(parents=True)
    for name, sentences in (("one", batch), ("twoandahalf", int(2.5 * batch) + 1), ("ten", 10 * batch), ("tiny", 2)):
        (folder / f"{name}.txt").write_text(_document(name, sentences))
    return folder


def _options(batch: int, model: str = HASHED_MODEL) -> BuildOptions:
    return BuildOptions(model=model, flush_sentences=batch, commit_sentences=4 * batch, chunk_tokens=40, progress=False)


def _rows(index: Path) -> tuple[list[tuple], list[tuple], np.ndarray]:
    """(chunk rows, sentence rows, sentence vectors), each sorted by chunk id and position."""
    snapshot = open_index(str(index))
    chunks = snapshot.chunks.table.to_arrow().select(["chunk_id", "doc_id", "part", "parts", "text"])
    sentences = snapshot.sentences.table.to_arrow().sort_by([("chunk_id", "ascending"), ("position", "ascending")])
    return (
        sorted(zip(*(chunks[name].to_pylist() for name in chunks.column_names))),
        list(zip(*(sentences[name].to_pylist() for name in ("chunk_id", "position", "text", "start", "end")))),
        np.array(sentences["vector"].to_pylist(), dtype=np.float32),
    )


def _assert_whole(index: Path, documents: int) -> None:
    """Every document has its chunks 0..parts-1 once each and its documents row; the counts agree."""
    chunks = open_index(str(index)).chunks.table.to_pandas()
    assert chunks["chunk_id"].is_unique
    for _, group in chunks.groupby("doc_id"):
        assert sorted(group["part"]) == list(range(group["parts"].iloc[0]))
    listed = {row["doc_id"]: row["chunks"] for row in list_documents(str(index))}
    assert listed == chunks.groupby("doc_id").size().to_dict()
    assert len(listed) == documents == read_manifest(str(index))["counts"]["documents"]


@pytest.mark.parametrize("batch", [1, 7, pytest.param(300, marks=pytest.mark.slow)])  # 300: 4,000 sentences, twice
def test_documents_across_write_batches_equal_a_one_batch_build(tmp_path: Path, batch: int):
    corpus = _corpus(tmp_path / "docs", batch)
    batched, whole = tmp_path / "batched", tmp_path / "whole"
    summary = Index(str(batched)).add([corpus], _options(batch))
    one_batch = BuildOptions(model=HASHED_MODEL, flush_sentences=ONE_BATCH, chunk_tokens=40, progress=False)
    Index(str(whole)).add([corpus], one_batch)

    assert (summary.added, summary.documents) == (4, 4)
    _assert_whole(batched, 4)
    chunks, sentences, vectors = _rows(batched)
    expected_chunks, expected_sentences, expected_vectors = _rows(whole)
    assert chunks == expected_chunks
    assert sentences == expected_sentences
    np.testing.assert_allclose(vectors, expected_vectors, atol=1e-5)
    texts: dict[str, list[tuple[int, str]]] = {}
    for _, doc_id, part, _, text in chunks:
        texts.setdefault(doc_id, []).append((part, text))
    for path in corpus.iterdir():
        assert " ".join(text for _, text in sorted(texts[str(path)])) == path.read_text()
    assert len(texts[str(corpus / "ten.txt")]) >= 2


@pytest.mark.slow  # embeds more sentences than a default write batch holds
def test_a_document_past_the_default_write_batch_is_found_by_its_last_word(tmp_path: Path):
    """6,000 sentences against the default write batch of 4,096: every chunk is written, and they
    hold the whole text, as a one-batch build's chunks would (chunking does not depend on batches)."""
    (tmp_path / "long.txt").write_text(_document("long", 6000))
    index = tmp_path / "idx"
    long = str(tmp_path / "long.txt")
    result = run_cli("arag_mcp.indexer", "build", long, "--index", str(index), "--model", HASHED_MODEL, "--quiet")
    assert result.returncode == 0, result.stderr
    _assert_whole(index, 1)
    chunks, sentences, _ = _rows(index)
    assert " ".join(text for *_, text in sorted(chunks, key=lambda row: row[2])) == (tmp_path / "long.txt").read_text()
    assert len(sentences) == 6000
    found = run_cli("arag_mcp.server", "--index", str(index), "--call", "keyword_search", 'keywords=["longend"]')
    assert "1 chunk matches" in found.stdout, found.stdout


def test_a_commit_of_a_document_written_in_part_is_refused(tmp_path: Path):
    index = tmp_path / "idx"
    writer = IndexWriter(str(index), 384, None)
    rows = [
        {"chunk_id": f"k-{part}", "doc_key": "k", "doc_id": "doc", "doc_hash": "h", "part": part, "parts": 3}
        | {"text": "Some text.", "tokens": 3}
        for part in (0, 1)
    ]
    document = {"doc_id": "doc", "doc_key": "k", "doc_hash": "h", "chunks": 3, "sentences": 2}
    sentences = pa.table(
        {
            "chunk_id": ["k-0", "k-1"],
            "doc_key": ["k", "k"],
            "position": pa.array([0, 0], pa.int32()),
            "text": ["Some text.", "Some text."],
            "start": pa.array([0, 0], pa.int32()),
            "end": pa.array([10, 10], pa.int32()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(768, np.float32)), 384),
        }
    )
    writer.add(
        pa.Table.from_pylist(rows, schema=chunks_schema()),
        sentences,
        pa.Table.from_pylist([document], schema=documents_schema()),
    )
    with pytest.raises(IncompleteWrite, match="1 document.*doc: 2 of its 3 chunks"):
        writer.commit(None, {})  # refused before the record is read
    assert read_manifest(str(index)) is None


def _damage(index: Path) -> tuple[tuple[str, str], int]:
    """Cut an index as the write-batch defect did, committing the damage: a document loses its last
    chunk and its documents row, another gets a duplicate chunk row. Returns their ids and the
    sentences lost."""
    db = lancedb.connect(str(index))
    chunks, documents, sentences = (db.open_table(name) for name in (CHUNKS, DOCUMENTS, SENTENCES))
    rows = chunks.to_pandas()
    sizes = rows.groupby("doc_id").size()
    cut, doubled = sizes.idxmax(), sizes.index[sizes.index != sizes.idxmax()][0]
    last = rows[rows["doc_id"] == cut]["part"].max()
    cut_id = rows[(rows["doc_id"] == cut) & (rows["part"] == last)]["chunk_id"].item()
    lost = sentences.count_rows(f"chunk_id = '{cut_id}'")
    chunks.delete(f"chunk_id = '{cut_id}'")
    sentences.delete(f"chunk_id = '{cut_id}'")
    documents.delete(f"doc_id = '{cut}'")
    chunks.add(chunks.search().where(f"doc_id = '{doubled}' AND part = 0").limit(None).to_arrow())
    manifest = check_manifest(str(index))
    write_manifest(
        replace(manifest, tables={**manifest.tables, **{t.name: t.version for t in (chunks, documents, sentences)}})
    )
    return (cut, doubled), lost


def test_sync_embeds_again_just_the_documents_an_earlier_build_wrote_in_part(tmp_path: Path):
    corpus = _corpus(tmp_path / "docs", 7)
    index = tmp_path / "idx"
    Index(str(index)).add([corpus], _options(7))
    expected = _rows(index)[:2]
    damaged, lost = _damage(index)
    assert len(list_documents(str(index))) == 3

    result = run_cli("arag_mcp.indexer", "sync", "--index", str(index), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "2 document(s) were written in part by an earlier build" in result.stderr
    assert "Traceback" not in result.stderr
    assert "added 0, updated 2, removed 0, unchanged 2" in result.stderr
    assert f"embedded {lost} sentences" in result.stderr, "the sentences still held keep their vectors"
    _assert_whole(index, 4)
    assert _rows(index)[:2] == expected

    again = run_cli("arag_mcp.indexer", "sync", "--index", str(index), "--quiet")
    assert "written in part" not in again.stderr
    assert "added 0, updated 0, removed 0, unchanged 4" in again.stderr


def test_a_slow_model_gets_write_batches_that_let_commits_land_on_time():
    """A commit waits for the batch in hand, so a batch is sized to take about half of
    --commit-seconds at the rate the model has shown (a slow machine took 7 minutes over a 4,096-
    sentence batch and committed every 7 minutes instead of every minute)."""
    from arag_mcp.indexer.build_summary import BuildSummary
    from arag_mcp.indexer.embed_steps import FIRST_BATCH_SENTENCES, MIN_BATCH_SENTENCES, batch_limit

    options = BuildOptions(flush_sentences=4096, commit_seconds=60)
    assert batch_limit(options, BuildSummary()) == FIRST_BATCH_SENTENCES  # the rate is not known yet
    slow = BuildSummary(embedded_sentences=100, embedding_seconds=10.0)  # 10 sentences/s
    assert batch_limit(options, slow) == 300
    fast = BuildSummary(embedded_sentences=1500, embedding_seconds=10.0)
    assert batch_limit(options, fast) == 4096
    crawling = BuildSummary(embedded_sentences=1, embedding_seconds=10.0)
    assert batch_limit(options, crawling) == MIN_BATCH_SENTENCES
    assert batch_limit(BuildOptions(flush_sentences=16), BuildSummary()) == 16


def test_a_rebuild_of_an_index_in_service_embeds_in_batches_of_the_flush_size(tmp_path: Path):
    """A rebuild over an index in service commits only at its end (the index served stays until
    then): no commit is due, so a batch holds `flush_sentences` whatever the model's rate."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(40):
        sentences = " ".join(f"Note {number} names the river number {line}." for line in range(12))
        (docs / f"note-{number}.md").write_text(f"# Note {number}\n\n{sentences}\n")
    index = Index(tmp_path / "idx")
    options = BuildOptions(model=HASHED_MODEL, progress=False)
    index.add([docs], options)
    committed = check_manifest(index.uri).tables
    rebuilt = index.add([docs], replace(options, rebuild=True, flush_sentences=300))
    assert rebuilt.embedded_sentences > 300 and rebuilt.documents == 40
    assert check_manifest(index.uri).tables != committed
