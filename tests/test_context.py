"""What each sentence is embedded with: its title, and in a long document its chunk's own words."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.text.context import (
    CONTEXT_TERMS,
    NEIGHBOUR_WORDS,
    SENTENCE_CONTEXT,
    chunk_context_terms,
    embedding_text,
    with_neighbours,
)

CHUNKS = [
    "The patient has basal cell carcinoma of the skin. Basal cells divide in the epidermis. It was 2019.",
    "The patient takes insulin for diabetes. Insulin lowers blood glucose. The patient felt better.",
    "The patient had surgery. Surgery removed the tumour, and the surgeon closed the wound.",
]


def test_context_terms_are_the_words_that_set_a_chunk_apart():
    terms = chunk_context_terms(CHUNKS)
    assert terms[0][:2] == ["basal", "carcinoma"]  # tf 2 beats tf 1; ties go alphabetically
    assert terms[1][0] == "insulin"
    assert terms[2][:2] == ["surgery", "closed"]
    for chosen in terms:
        assert 0 < len(chosen) <= CONTEXT_TERMS
        assert "patient" not in chosen  # in every chunk: says nothing about any one of them
        assert not {"the", "it", "was", "2019"} & set(chosen)  # stop words and numbers never
    assert chunk_context_terms(CHUNKS[:1]) == [[]]  # a one-chunk document has only its title


def test_embedding_text_places_the_sentence_after_its_context():
    assert (
        embedding_text("Medical", [], ["basal", "skin"], "It can be cured.")
        == "Medical (basal, skin): It can be cured."
    )
    assert embedding_text("Radium", [], [], "It glows.") == "Radium: It glows."
    assert embedding_text("", [], ["basal"], "It can be cured.") == "(basal): It can be cured."
    assert embedding_text("", [], [], "It glows.") == "It glows."


def test_a_short_sentence_is_embedded_between_the_ends_of_its_neighbours():
    long_before = " ".join(f"w{number}" for number in range(40)) + "."
    sentences = [long_before, "It was 2019.", "Insulin lowers blood glucose in every patient of the ward.", "Done."]
    assert with_neighbours(sentences, 2) == sentences[2]  # eight words or more: itself alone
    middle = with_neighbours(sentences, 1).split()
    assert middle[:NEIGHBOUR_WORDS] == long_before.split()[-NEIGHBOUR_WORDS:]
    assert " ".join(middle[NEIGHBOUR_WORDS:]) == "It was 2019. " + sentences[2]
    assert with_neighbours(sentences, 3) == sentences[2] + " Done."  # the last: the one before only
    assert with_neighbours(["Alone."], 0) == "Alone."


def test_the_heading_path_joins_the_title_without_repeating_it():
    assert embedding_text("Guide", ["Install", "Windows"], [], "Run it.") == "Guide › Install › Windows: Run it."
    assert embedding_text("Guide", ["Guide", "Install"], ["msi"], "Run it.") == "Guide › Install (msi): Run it."
    assert (
        embedding_text("Path | Node.js", ["Path", "path.sep"], [], "It is /.") == "Path | Node.js › path.sep: It is /."
    )
    assert embedding_text("Pathology", ["Path"], [], "Cells.") == "Pathology › Path: Cells."
    assert embedding_text("", ["Install"], [], "Run it.") == "Install: Run it."


def test_built_vectors_embed_each_sentence_in_its_context(tmp_path: Path, embedder):
    records = [
        {"id": "long", "title": "Medical", "text": " ".join(CHUNKS * 2)},
        {"id": "short", "title": "Radium", "text": "Radium glows in the dark. It was found in 1898."},
    ]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(record) + "\n" for record in records))
    Index(str(tmp_path / "idx")).add([corpus], BuildOptions(chunk_tokens=40, progress=False))
    snapshot = open_index(str(tmp_path / "idx"))
    assert snapshot.manifest.sentence_context == SENTENCE_CONTEXT
    chunks = snapshot.chunks.table.to_pandas().sort_values(["doc_id", "part"])
    long_chunks = chunks[chunks["doc_id"] == "long"]
    assert len(long_chunks) > 1
    terms = {
        **dict(zip(long_chunks["chunk_id"], chunk_context_terms(list(long_chunks["text"])))),
        **{cid: [] for cid in chunks[chunks["doc_id"] == "short"]["chunk_id"]},
    }
    titles = dict(zip(chunks["chunk_id"], chunks["title"]))
    sentences = snapshot.sentences.table.to_pandas().sort_values(["chunk_id", "position"])
    in_chunk = sentences.groupby("chunk_id")["text"].agg(list)
    expected_texts = [
        embedding_text(titles[cid], [], terms[cid], with_neighbours(in_chunk[cid], position))
        for cid, position in zip(sentences["chunk_id"], sentences["position"])
    ]
    assert any(len(text.split()) < 8 for text in sentences["text"])  # some are embedded with neighbours
    assert any(terms[cid] for cid in sentences["chunk_id"])
    expected = embedder.encode_documents(expected_texts)
    stored = np.stack(sentences["vector"].to_numpy())
    assert np.allclose(stored, expected, atol=1e-4)
