"""What keyword_search's default (whole-word) matching finds, and what its answers say, on small real
texts (fixtures/keywords.jsonl) in a real index, through the tool functions and the MCP client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.snapshot import IndexSnapshot, open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from mcp import Client

from ..conftest import FIXTURES, HASHED_MODEL, live_index
from .keyword_counts import occurrences

CORPUS = FIXTURES / "keywords.jsonl"


def cid(doc_id: str) -> str:
    return f"{doc_key(doc_id)}-0"


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    index = tmp_path_factory.mktemp("keywords") / "idx"
    Index(str(index)).add([CORPUS], BuildOptions(model=HASHED_MODEL, progress=False))
    return index


@pytest.fixture(scope="module")
def snapshot(index: Path) -> IndexSnapshot:
    return open_index(str(index))


def ids(snapshot: IndexSnapshot, keywords: list[str], top_k: int = 5, match: str = "word") -> list[str]:
    return [hit.chunk.chunk_id for hit in keyword_search(snapshot, keywords, top_k, match).hits]


def test_a_title_counts_as_part_of_its_chunk(snapshot):
    assert occurrences(snapshot, "Piacenza") == {"Lothair II": 1, "Short": 1}
    assert occurrences(snapshot, "Lothair") == {"Lothair II": 2, "Teutberga": 1, "Waldrada": 1}  # title and text
    assert ids(snapshot, ["Lothair II"], top_k=1) == [cid("lothair")]
    assert ids(snapshot, ["Eddie Fisher"]) == [cid("fisher")]  # the text spells it "Edwin John "Eddie" Fisher"
    paper = keyword_search(snapshot, ["Lothair II"], top_k=5, match="substring").hits
    assert {hit.score for hit in paper} == {len("Lothair II")}  # once in each text: ties, ordered by chunk id
    assert ids(snapshot, ["Eddie Fisher"], match="substring") == []  # the paper's matching ignores titles


def test_keywords_match_whole_words_only(snapshot):
    assert ids(snapshot, ["Erla"]) == []
    assert ids(snapshot, ["Arnett"]) == []
    assert ids(snapshot, ["Erla"], match="substring") == [cid("netherlands")]
    assert ids(snapshot, ["Einstein"]) == [cid("einstein")]  # a possessive ends a word
    assert ids(snapshot, ["Block B"]) == []
    assert ids(snapshot, ["Block booking"]) == [cid("block")]


def test_case_accents_and_width_do_not_matter(snapshot):
    assert ids(snapshot, ["jimena benitez"]) == [cid("benitez")]
    assert ids(snapshot, ["JIMENA BENÌTEZ"]) == [cid("benitez")]
    assert ids(snapshot, ["Tokyo"]) == [cid("benitez")]
    [hit] = keyword_search(snapshot, ["Benitez"], top_k=1).hits
    assert hit.matched == ["Jimena Benìtez plays for a club in ＴＯＫＹＯ."]  # snippets keep the original text


def test_a_rare_keyword_is_not_drowned_by_a_frequent_one(snapshot):
    keywords = ["Maybach Music Group", "Fire of Zamani"]
    assert cid("zamani") not in ids(snapshot, keywords, top_k=2, match="substring")
    found = keyword_search(snapshot, keywords, top_k=2)
    assert [hit.chunk.chunk_id for hit in found.hits] == [cid("maybach-1"), cid("zamani")]
    assert [hit.keywords for hit in found.hits] == [("Maybach Music Group",), ("Fire of Zamani",)]


def test_counts_per_keyword_and_in_all(snapshot):
    found = keyword_search(snapshot, ["Lothair II", "Fulton County", "Piacenza"], top_k=3)
    assert found.keywords == ["Lothair II", "Fulton County", "Piacenza"]
    assert [(c.at_least, c.at_most) for c in found.per_keyword] == [(3, 3), (0, 0), (2, 2)]
    assert (found.matching.at_least, found.matching.at_most) == (4, 4)
    assert [hit.chunk.chunk_id for hit in found.hits][0] == cid("lothair")
    assert found.hits[0].keywords == ("Lothair II", "Piacenza")


@pytest.fixture(scope="module")
def live(index: Path) -> Iterator[LiveIndex]:
    with live_index(index, load_model=False) as live:
        yield live


@pytest.mark.anyio
async def test_the_answer_tells_the_counts_and_who_matched_what(live: LiveIndex):
    async with Client(create_server(live)) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Lothair II", "Fulton County"], "top_k": 2})
        text, content = found.content[0].text, found.structured_content
        assert text.startswith("3 chunks match ('Lothair II': 3 chunks; 'Fulton County': 0 chunks); showing 2")
        assert content["matching_chunks"] == 3 and "matching_chunks_up_to" not in content
        assert content["keyword_counts"] == [
            {"keyword": "Lothair II", "chunks": 3},
            {"keyword": "Fulton County", "chunks": 0},
        ]
        assert [r["keywords"] for r in content["results"]] == [["Lothair II"], ["Lothair II"]]
        assert "matched: 'Lothair II'" in text

        one = await client.call_tool("keyword_search", {"keywords": ["Einstein"]})
        assert one.content[0].text.startswith("1 chunk matches ('Einstein': 1 chunk); showing 1")

        none = await client.call_tool("keyword_search", {"keywords": ["Fulton County"]})
        assert none.content[0].text.startswith("No chunk matches ('Fulton County': 0 chunks).")
        assert none.structured_content["results"] == [] and none.structured_content["matching_chunks"] == 0

        bad = await client.call_tool("keyword_search", {"keywords": ["++"]})
        assert bad.is_error and '"++" has no letter or digit' in bad.content[0].text


@pytest.mark.anyio
async def test_a_source_every_chunk_shares_is_not_repeated_in_the_text(live: LiveIndex):
    """The index is one file: the instructions name it, the text does not repeat it (the structured
    content says it once; a source that only the results share: test_scope.py)."""
    async with Client(create_server(live)) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Lothair II"], "top_k": 3})
        text, content = found.content[0].text, found.structured_content
        source = content["source"]
        assert source.endswith("keywords.jsonl") and text.count(source) == 0
        assert all("source" not in result for result in content["results"])


@pytest.mark.anyio
async def test_a_whole_chunk_result_counts_as_read(live: LiveIndex):
    async with Client(create_server(live)) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Piacenza"], "top_k": 2})
        results = {r["chunk_id"]: r for r in found.structured_content["results"]}
        assert results[cid("short")]["whole_chunk"] is True
        assert results[cid("short")]["snippet"] == "Piacenza is a city in Italy."
        lothair = results[cid("lothair")]  # three sentences: short enough to be sent whole
        assert lothair["whole_chunk"] is True and "extent" not in lothair
        assert (
            lothair["snippet"]
            == "He was king of Lotharingia from 855. His reign was troubled. Lothair II died in 869 at Piacenza."
        )
        assert "(whole chunk)" in found.content[0].text and "no need to read it" in found.content[0].text
        conversation = found.structured_content["conversation"]

        read = await client.call_tool(
            "chunk_read", {"chunk_ids": [cid("short"), cid("lothair")], "conversation": conversation}
        )
        assert [c["status"] for c in read.structured_content["chunks"]] == ["read_before", "read_before"]
