"""`--model hashed-words-64`, the model of the logic tests: the same vectors in every process, unit
length, texts that share words near; an index of it carries no encoder folder, and the server and
later commands make its vectors again from the name in the manifest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import index_dump
import numpy as np
import pytest
from arag_mcp.indexer.embedding.embedder import Embedder
from arag_mcp.indexer.embedding.hashed_words import HASHED_DIMENSION, HASHED_WINDOW, HashedWordsEncoder
from arag_mcp.indexer.embedding.settings import HASHED_BACKEND, HASHED_MODEL
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from brute_force import SentenceMatrix
from mcp import Client

from .conftest import SAMPLE, live_index, run_cli

TEXTS = [
    "Radium glows faintly blue in the dark.",
    "Polonium was named after Poland, Marie Curie's homeland.",
    "",
    "東京は日本の首都です。",
    "internationalisation",
]
ENCODED_IN_A_PROCESS = f"""
import sys
from arag_mcp.indexer.embedding.hashed_words import HashedWordsEncoder
sys.stdout.write(HashedWordsEncoder().encode({TEXTS!r}, "").tobytes().hex())
"""


def test_vectors_are_the_same_in_another_process_whatever_its_hash_seed():
    here = HashedWordsEncoder().encode(TEXTS, "")
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        made = subprocess.run(
            [sys.executable, "-c", ENCODED_IN_A_PROCESS], capture_output=True, text=True, env=env, check=True
        )
        there = np.frombuffer(bytes.fromhex(made.stdout), dtype=np.float32).reshape(here.shape)
        assert np.array_equal(here, there)


def test_vectors_are_unit_float32_of_the_model_dimension():
    embedder = Embedder(HASHED_MODEL).load()
    vectors = embedder.encode_documents(TEXTS)
    assert (embedder.dimension, embedder.backend, embedder.encoder_folder) == (HASHED_DIMENSION, HASHED_BACKEND, None)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), HASHED_DIMENSION)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-6)
    assert embedder.prompt("query") == embedder.prompt("document") == ""
    assert np.array_equal(embedder.encode_queries(TEXTS), vectors)


def test_texts_that_share_words_are_nearer_than_texts_that_do_not():
    query, shared, inflected, other = HashedWordsEncoder().encode(
        ["Which element glows blue?", "Radium glows faintly blue.", "The elements glowed.", "Pierre taught physics."],
        "",
    )
    assert query @ shared > query @ inflected > query @ other


def test_tokens_are_word_pieces_marks_and_characters_of_scripts_without_spaces():
    encoder = HashedWordsEncoder()
    text = "Curie's radioactivity, 東京です"
    offsets = encoder.token_offsets(text)
    assert [text[start:end] for start, end in offsets] == [
        *("Curie", "'", "s", "radioact", "ivity", ","),
        *("東", "京", "で", "す"),
    ]
    assert encoder.count_tokens([text, "", "a b"]) == [len(offsets), 0, 2]


def test_words_past_the_window_are_not_embedded():
    """As a transformer's window cuts a text: the vector is the first HASHED_WINDOW tokens'."""
    encoder = HashedWordsEncoder()
    full = " ".join(["radium"] * HASHED_WINDOW)
    one_short = " ".join(["radium"] * (HASHED_WINDOW - 1))
    assert np.array_equal(*encoder.encode([full, f"{full} polonium"], ""))
    assert not np.array_equal(*encoder.encode([one_short, f"{one_short} polonium"], ""))


@pytest.fixture(scope="module")
def hashed_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    index = tmp_path_factory.mktemp("hashed") / "idx"
    built = run_cli("arag_mcp.indexer", "build", str(SAMPLE), "--index", str(index), "--model", HASHED_MODEL, "--quiet")
    assert built.returncode == 0, built.stderr
    return index


@pytest.fixture(scope="module")
def live(hashed_index: Path) -> Iterator[LiveIndex]:
    with live_index(hashed_index) as live:
        yield live


def test_the_index_records_the_model_and_carries_no_encoder(hashed_index: Path):
    manifest = json.loads((hashed_index / "manifest.json").read_text())
    assert (manifest["model"], manifest["embedding_backend"], manifest["dimension"]) == (
        HASHED_MODEL,
        HASHED_BACKEND,
        HASHED_DIMENSION,
    )
    assert manifest["encoder"] is None and not (hashed_index / "encoder").exists()
    _, vectors = index_dump.sentence_vectors(open_index(str(hashed_index)))
    assert vectors.shape[1] == HASHED_DIMENSION


@pytest.mark.anyio
async def test_the_server_embeds_queries_with_the_model_the_manifest_names(live: LiveIndex, hashed_index: Path):
    chunk_ids, vectors = index_dump.sentence_vectors(open_index(str(hashed_index)))
    sentences = SentenceMatrix(chunk_ids, vectors)
    query = "Which element glows faintly blue?"
    async with Client(create_server(live, PROFILES["arag"])) as client:
        found = await client.call_tool("semantic_search", {"query": query, "top_k": 3})
    assert not found.is_error, found.content[0].text
    results = found.structured_content["results"]
    assert results[0]["title"] == "Radium"
    expected = sentences.best_sentence_ranking(HashedWordsEncoder().encode([query], "")[0], 3)
    assert [hit["chunk_id"] for hit in results] == [chunk_id for chunk_id, _ in expected]


def test_later_commands_embed_with_the_index_model(tmp_path: Path):
    index = tmp_path / "idx"
    run_cli("arag_mcp.indexer", "build", str(SAMPLE), "--index", str(index), "--model", HASHED_MODEL, "--quiet")
    (tmp_path / "thorium.md").write_text("# Thorium\n\nThorium glows when heated; Berzelius named it in 1829.\n")
    added = run_cli("arag_mcp.indexer", "add", str(tmp_path / "thorium.md"), "--index", str(index), "--quiet")
    assert added.returncode == 0, added.stderr
    manifest = json.loads((index / "manifest.json").read_text())
    assert (manifest["model"], manifest["embedding_backend"]) == (HASHED_MODEL, HASHED_BACKEND)
    snapshot = open_index(str(index))
    chunk_ids, vectors = index_dump.sentence_vectors(snapshot)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-6)
    [thorium] = [chunk.chunk_id for chunk in index_dump.all_chunks(snapshot) if chunk.title == "Thorium"]
    best = SentenceMatrix(chunk_ids, vectors).best_sentence_ranking(
        HashedWordsEncoder().encode(["Berzelius named thorium"], "")[0], 1
    )
    assert best[0][0] == thorium
