"""Building, updating and inspecting indexes: real files, real LanceDB; the packaged model where chunks
follow its tokenizer or the test is of its index, else the model of hashed words."""

from __future__ import annotations

import json
import logging
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import index_dump
import lancedb
import numpy as np
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.build_summary import report_skips
from arag_mcp.indexer.cli import main as index_main
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.manifest import FORMAT_VERSION, MANIFEST_FILE, Counts, read_manifest
from arag_mcp.indexer.index.schema import CHUNKS, DOCUMENTS, SENTENCES, TABLES
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.index.stores import open_store
from arag_mcp.indexer.index.writer import vector_search
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.text.chunking import CHARS_PER_TOKEN_BOUND, Span, pack_chunks, sentence_spans

from .conftest import BENCH_DATA, HASHED_MODEL, SAMPLE, CliResult, run_cli

QUIET = BuildOptions(model=HASHED_MODEL, progress=False)


def test_sample_index_has_tables_and_manifest(sample_index: Path):
    snapshot = open_index(str(sample_index))
    manifest = snapshot.manifest
    assert manifest.model == "all-MiniLM-L6-v2"
    assert manifest.dimension == 384
    assert manifest.chunk_tokens == 1000
    assert manifest.counts == Counts(6, 6, snapshot.sentences.table.count_rows())
    chunks = snapshot.chunks.table.to_pandas()
    assert set(chunks["title"]) == {
        "Marie Curie",
        "Pierre Curie",
        "university-of-paris",
        "Polonium",
        "Radium",
        "Curium",
    }
    radium = chunks[chunks["doc_id"] == "radium"].iloc[0]
    assert json.loads(radium["metadata"]) == {"category": "element"}
    assert radium["chunk_id"] == f"{doc_key('radium')}-0"
    sentences = snapshot.sentences.table.to_pandas()
    assert sentences["vector"].map(len).eq(384).all()
    for _, row in sentences.iterrows():
        text = chunks.set_index("chunk_id").loc[row["chunk_id"], "text"]
        assert text[row["start"] : row["end"]] == row["text"]


def test_chunks_are_bounded_and_sentence_aligned(tmp_path: Path, embedder):
    sentences = [f"Sentence number {i} talks about topic {i % 7} in some detail." for i in range(120)]
    (tmp_path / "long.txt").write_text(" ".join(sentences))
    (tmp_path / "short.txt").write_text("A short document.")
    index = tmp_path / "idx"
    Index(str(index)).add(
        [tmp_path / "long.txt", tmp_path / "short.txt"], BuildOptions(chunk_tokens=60, progress=False)
    )
    chunks = open_index(str(index)).chunks.table.to_pandas().sort_values(["doc_id", "part"])
    long_chunks = chunks[chunks["doc_id"].str.endswith("long.txt")]
    assert len(long_chunks) > 10
    assert (long_chunks["tokens"] <= 60).all()
    assert " ".join(long_chunks["text"]) == " ".join(sentences)
    for text in long_chunks["text"]:
        assert text.startswith("Sentence number") and text.endswith(".")
        assert embedder.count_tokens([text])[0] <= 60 + 5
    assert list(long_chunks["part"]) == list(range(len(long_chunks)))
    assert (long_chunks["parts"] == len(long_chunks)).all()
    assert chunks[chunks["doc_id"].str.endswith("short.txt")]["text"].tolist() == ["A short document."]


def test_overlong_sentence_is_split_hard(tmp_path: Path):
    words = " ".join(f"word{i}" for i in range(400))
    (tmp_path / "run-on.txt").write_text(words)
    index = tmp_path / "idx"
    Index(str(index)).add([tmp_path / "run-on.txt"], BuildOptions(chunk_tokens=100, progress=False))
    chunks = open_index(str(index)).chunks.table.to_pandas().sort_values("part")
    assert len(chunks) > 4
    assert (chunks["tokens"] <= 100).all()
    assert " ".join(chunks["text"]).split() == words.split()


def test_one_endless_line_reaches_the_tokenizer_in_bounded_pieces(embedder):
    text = "".join(f"{'x' * 20}={i}" for i in range(5_000)) + " The end."  # 130k characters, one line
    seen: list[int] = []

    def count_tokens(texts: list[str]) -> list[int]:
        seen.extend(len(piece) for piece in texts)
        return embedder.count_tokens(texts)

    def token_offsets(piece: str) -> list[tuple[int, int]]:
        seen.append(len(piece))
        return embedder.token_offsets(piece)

    spans = sentence_spans(text, count_tokens, token_offsets, 200)
    assert max(seen) <= 200 * CHARS_PER_TOKEN_BOUND
    assert all(span.tokens <= 200 for span in spans)
    assert "".join(text[span.start : span.end] for span in spans).replace(" ", "") == text.replace(" ", "")


def test_a_chunk_of_few_tokens_and_many_characters_is_bounded_in_characters():
    """A run of letters the tokenizer reads as one unknown token: 1,000 characters for 1 token."""
    sentences = [Span(start, start + 1000, 1) for start in range(0, 100_000, 1001)]
    chunks = pack_chunks(sentences, 100)
    assert [span for chunk in chunks for span in chunk] == sentences
    assert max(chunk[-1].end - chunk[0].start for chunk in chunks) <= 100 * CHARS_PER_TOKEN_BOUND


def _write_corpus(folder: Path, docs: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text)


def test_incremental_build_embeds_only_changes(tmp_path: Path):
    corpus = tmp_path / "docs"
    _write_corpus(
        corpus, {"a.md": "# A\n\nAlpha text. More alpha.", "b.md": "# B\n\nBeta text.", "c.md": "# C\n\nGamma text."}
    )
    index = str(tmp_path / "idx")
    first = Index(index).add([corpus], QUIET)
    assert (first.added, first.documents) == (3, 3)

    again = Index(index).add([corpus], QUIET)
    assert (again.added, again.updated, again.embedded_sentences, again.unchanged) == (0, 0, 0, 3)

    (corpus / "b.md").write_text("# B\n\nBeta text, edited. With a new sentence.")
    (corpus / "d.md").write_text("# D\n\nDelta text.")
    (corpus / "c.md").unlink()
    update = Index(index).sync(QUIET)
    assert (update.added, update.updated, update.unchanged, update.removed) == (1, 1, 1, 1)

    chunks = open_index(index).chunks.table.to_pandas()
    assert sorted(chunks["title"]) == ["A", "B", "D"]
    assert "edited" in chunks[chunks["title"] == "B"]["text"].item()
    sentences = open_index(index).sentences.table.to_pandas()
    assert set(sentences["chunk_id"]) == set(chunks["chunk_id"])
    assert not sentences["text"].str.contains("Gamma").any()

    rebuilt = Index(index).add([corpus], replace(QUIET, rebuild=True))
    assert rebuilt.added == 3


@pytest.mark.parametrize("commit_sentences", [16384, 16], ids=["one commit", "a commit every few writes"])
def test_a_first_build_keeps_one_copy_of_its_rows(tmp_path: Path, commit_sentences: int):
    """Before a new index's first commit no server reads it, so the fragments that compaction copied
    are cleaned up; from that commit on, every version a server may read is kept."""
    index = tmp_path / "idx"
    options = replace(QUIET, flush_sentences=8, commit_sentences=commit_sentences)
    Index(str(index)).add([SAMPLE], options)
    db = lancedb.connect(str(index))
    for name in (CHUNKS, SENTENCES):
        table = db.open_table(name)
        current = {Path(f.path).name for fragment in table.to_lance().get_fragments() for f in fragment.data_files()}
        on_disk = {path.name for path in (index / f"{name}.lance" / "data").iterdir()}
        if commit_sentences > 100:
            assert on_disk == current, name
        else:
            assert on_disk > current, name  # the first commit's fragments: a server may be reading them


def test_vector_search_re_ranks_more_candidates_as_the_index_grows():
    """At 10M sentences re-ranking 10x the candidates found 0.921 of the exact top 10, 20x 0.964."""
    factors = [vector_search(sentences)["refine_factor"] for sentences in (200_000, 1_000_000, 3_000_000, 10_000_000)]
    assert factors == sorted(factors)
    assert factors[1] == 10 and factors[-1] == 20
    assert {vector_search(10_000_000)["nprobes"]} == {vector_search(200_000)["nprobes"]}


def test_ray_without_ray_installed_is_one_line_naming_the_extra(tmp_path: Path, monkeypatch):
    import arag_mcp.indexer

    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.delitem(sys.modules, "arag_mcp.indexer.ray_build", raising=False)
    monkeypatch.delattr(arag_mcp.indexer, "ray_build", raising=False)
    (tmp_path / "a.txt").write_text("Some text.")
    result = run_cli("arag_mcp.indexer", "build", str(tmp_path / "a.txt"), "--index", str(tmp_path / "idx"), "--ray")
    assert result.returncode == 1
    assert result.stderr.strip() == 'arag-index: error: --ray needs ray; install it with `pip install "arag-mcp[ray]"`'
    assert read_manifest(str(tmp_path / "idx")) is None


def test_bad_input_is_one_line_without_traceback(tmp_path: Path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "good.txt").write_text("Some good text.")
    (corpus / "empty.txt").write_text("  \n")
    (corpus / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    index = str(tmp_path / "idx")

    result = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", index, "--model", HASHED_MODEL, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "skipped docs/empty.txt: empty" in result.stderr.splitlines()
    assert "skipped docs/binary.txt: binary (not text)" in result.stderr.splitlines()
    assert "Traceback" not in result.stderr

    result = run_cli(
        "arag_mcp.indexer",
        "build",
        str(corpus),
        "--index",
        str(tmp_path / "idx3"),
        "--model",
        "/no/such/model",
        "--quiet",
    )
    _assert_one_line_error(result, "--model")

    result = run_cli("arag_mcp.indexer", "info", "--index", str(tmp_path / "missing"))
    _assert_one_line_error(result, "--index")

    result = run_cli("arag_mcp.indexer", "list", "--index", str(tmp_path / "missing"))
    _assert_one_line_error(result, "--index")

    result = run_cli("arag_mcp.indexer", "remove", "no-such-doc", "--index", index)
    _assert_one_line_error(result, "no-such-doc", "arag-index list")

    result = run_cli("arag_mcp.indexer", "build", str(tmp_path / "no-such-file.txt"), "--index", index, "--quiet")
    _assert_one_line_error(result, "no-such-file.txt")


def test_index_refuses_another_model(tmp_path: Path, sample_index: Path):
    other = tmp_path / "other-model"
    # The same weights under another name stand in for a different model.
    from arag_mcp.indexer.embedding.settings import resolve_model_path

    shutil.copytree(resolve_model_path("all-MiniLM-L6-v2"), other)
    index = tmp_path / "idx"
    Index(str(index)).add([SAMPLE / "pierre-curie.md"], BuildOptions(progress=False))
    result = run_cli("arag_mcp.indexer", "build", str(SAMPLE), "--index", str(index), "--model", str(other), "--quiet")
    _assert_one_line_error(result, "--model all-MiniLM-L6-v2")
    assert open_index(str(index)).manifest.counts.documents == 1


def test_info_prints_manifest(sample_index: Path):
    result = run_cli("arag_mcp.indexer", "info", "--index", str(sample_index))
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["counts"]["documents"] == 6
    assert info["tables"].keys() == {*TABLES, DOCUMENTS}
    assert info["sources"] == [{"path": SAMPLE.resolve().as_posix(), "exclude": []}]


@pytest.mark.skipif(not BENCH_DATA.exists(), reason="shared bench-data not present")
def test_shared_corpus_indexes_as_is(tmp_path: Path):
    lines = (BENCH_DATA / "musique" / "corpus.jsonl").read_text().splitlines()[:40]
    subset = tmp_path / "musique.jsonl"
    subset.write_text("\n".join(lines) + "\n")
    summary = Index(str(tmp_path / "idx")).add([subset], QUIET)
    assert summary.documents == 40 and summary.chunks == 40
    titles = set(open_index(str(tmp_path / "idx")).chunks.table.to_pandas()["title"])
    assert json.loads(lines[0])["title"] in titles


def _assert_one_line_error(result: CliResult, *expected: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("arag-index: error:")]
    assert len(errors) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for text in expected:
        assert text in errors[0], errors[0]


def test_chunk_vectors_are_the_normalised_mean_of_their_sentence_vectors(sample_index: Path):
    snapshot = open_index(str(sample_index))
    owners, sentence_vectors = index_dump.sentence_vectors(snapshot)
    for cid, vector in zip(*index_dump.chunk_vectors(snapshot)):
        mean = sentence_vectors[[owner == cid for owner in owners]].sum(axis=0)
        assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-6)


def test_an_index_of_another_format_is_refused_in_one_line_that_names_the_rebuild(tmp_path: Path, capsys):
    index = tmp_path / "idx"
    Index(str(index)).add([SAMPLE / "pierre-curie.md"], QUIET)
    older = {**read_manifest(str(index)), "format_version": FORMAT_VERSION - 1}
    open_store(str(index)).write_file(MANIFEST_FILE, json.dumps(older).encode())
    for command in (["info"], ["list"], ["add", str(SAMPLE / "marie-curie.md")], ["sync"], ["remove", "x"]):
        assert index_main([*command, "--index", str(index)]) == 2
        errors = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(errors) == 1 and f"index format {FORMAT_VERSION - 1}" in errors[0], errors
        assert "--rebuild" in errors[0] and "Traceback" not in errors[0]
    with pytest.raises(IndexStoreError, match="--rebuild"):
        open_index(str(index))

    result = run_cli("arag_mcp.server", "--index", str(index))
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "--rebuild" in result.stderr, result.stderr

    rebuilt = Index(str(index)).add([SAMPLE / "pierre-curie.md"], replace(QUIET, rebuild=True))
    assert rebuilt.documents == 1 and read_manifest(str(index))["format_version"] == FORMAT_VERSION


def test_a_build_that_finds_nothing_to_index_fails_in_one_line_naming_what_it_reads(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "binary").mkdir()
    (tmp_path / "binary" / "data.bin").write_bytes(b"\x00\x01")
    empty = str(tmp_path / "empty")
    result = run_cli(
        "arag_mcp.indexer", "build", empty, "--index", str(tmp_path / "idx"), "--model", HASHED_MODEL, "--quiet"
    )
    _assert_one_line_error(result, "no documents found in", ".md", "the index is kept, empty")
    assert read_manifest(str(tmp_path / "idx"))["counts"]["documents"] == 0
    result = run_cli("arag_mcp.indexer", "add", str(tmp_path / "binary"), "--index", str(tmp_path / "idx"), "--quiet")
    _assert_one_line_error(result, "(1 skipped, listed above)")
    assert "skipped" in result.stderr and "data.bin" in result.stderr

    (tmp_path / "empty" / "note.md").write_text("# Note\n\nA note at last.\n")
    assert run_cli("arag_mcp.indexer", "sync", "--index", str(tmp_path / "idx"), "--quiet").returncode == 0
    (tmp_path / "empty" / "note.md").unlink()
    result = run_cli("arag_mcp.indexer", "sync", "--index", str(tmp_path / "idx"), "--quiet")
    assert result.returncode == 0 and "holds no documents" in result.stderr, result.stderr


def test_a_missing_source_leaves_no_index_folder_behind(tmp_path: Path):
    result = run_cli("arag_mcp.indexer", "build", str(tmp_path / "missing"), "--index", str(tmp_path / "idx"))
    _assert_one_line_error(result, "missing: no such file or folder")
    assert not (tmp_path / "idx").exists()


def test_arag_index_alone_lists_its_commands():
    result = run_cli("arag_mcp.indexer")
    assert result.returncode == 2
    assert all(command in result.stderr for command in ("add", "sync", "watch", "remove", "describe")), result.stderr


def test_the_summary_rate_is_the_model_s_while_it_embedded(tmp_path: Path):
    """The model's loading and the reading of files are not counted in the rate (a one-sentence
    build once said "1 sentences/s")."""
    summary = Index(str(tmp_path / "idx")).add([SAMPLE], QUIET)
    assert 0 < summary.embedding_seconds < summary.seconds
    assert summary.sentences_per_second == pytest.approx(summary.embedded_sentences / summary.embedding_seconds)
    assert "sentences/s while embedding" in summary.describe()
    unchanged = Index(str(tmp_path / "idx")).sync(QUIET)
    assert unchanged.embedded_sentences == 0 and "sentences/s" not in unchanged.describe()


def test_a_skipped_file_is_told_as_it_is_met_and_once(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """A long build tells a skip when it meets it, not at its end; the end counts them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a-broken.pdf").write_bytes(b"%PDF-1.4 this is not a PDF")
    for number in range(12):
        (docs / f"note-{number:02}.md").write_text(f"# Note {number}\n\nNote {number} is here. It has two sentences.\n")
    caplog.set_level(logging.DEBUG, logger="arag_mcp.indexer")
    summary = Index(str(tmp_path / "idx")).add([docs], replace(QUIET, commit_sentences=4))
    report_skips(summary)
    messages = [record.getMessage() for record in caplog.records]
    told = [at for at, message in enumerate(messages) if message.startswith("skipped ") and "a-broken.pdf" in message]
    commits = [at for at, message in enumerate(messages) if message.startswith("committed ")]
    assert len(told) == 1 and len(commits) > 1, messages
    assert told[0] < commits[-1], "the skip was told only at the end"
    assert "skipped 1 file(s) or record(s), listed above: 1 unreadable" in messages
