"""Other forms of a keyword's words (the keyword engine's word_forms.py): a keyword that matches few chunks
is told which forms of its word, or which of its words alone, the index holds, with their counts;
`forms: true` matches the other forms too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arag_mcp.indexer.index.keywords.word_forms import other_forms
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from mcp import Client

from ..conftest import HASHED_MODEL, live_index, titled_records_index

pytestmark = pytest.mark.anyio
RECORDS = [
    ("Guild", "The guild was chartered in 1412 by the king."),
    ("Towns", "Both towns received charters from the crown."),
    ("Appleton", "Appleton lies in Outagamie County, Wisconsin."),
    ("Kaukauna", "Kaukauna is a city of Outagamie in the north."),
    ("Brown", "Brown County borders the bay; the county seat is Green Bay."),
    ("Mood", "Their happiness was plain; a happy crowd sang."),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return titled_records_index(tmp_path_factory.mktemp("forms"), RECORDS, HASHED_MODEL)


@pytest.fixture(scope="module")
def live(index: Path) -> Iterator[LiveIndex]:
    with live_index(index, load_model=False) as live:
        yield live


def test_other_forms_are_the_vocabulary_words_sharing_the_stem(index: Path):
    lookup = open_index(str(index)).keywords
    assert other_forms(lookup, "charter") == ["charters", "chartered"]
    assert other_forms(lookup, "happy") == ["happiness"]
    assert other_forms(lookup, "crown") == []  # no other form in the index
    assert other_forms(lookup, "東京") == []  # English stems only


async def test_a_keyword_matching_nothing_names_the_forms_the_index_holds(live: LiveIndex):
    async with Client(create_server(live)) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["charter"]})
        text = found.content[0].text
        assert found.structured_content["results"] == []
        assert "'charter' also as 'charters' (1), 'chartered' (1)" in text, text
        assert "forms: true" in text
        matched = await client.call_tool("keyword_search", {"keywords": ["charter"], "forms": True})
        assert {r["title"] for r in matched.structured_content["results"]} == {"Guild", "Towns"}
        counts = {c["keyword"]: c["chunks"] for c in matched.structured_content["keyword_counts"]}
        assert counts == {"charter": 0, "charters": 1, "chartered": 1}
        assert "also as" not in matched.content[0].text


async def test_a_keyword_of_several_words_matching_few_chunks_names_its_words_counts(live: LiveIndex):
    async with Client(create_server(live)) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Outagamie County"]})
        text = found.content[0].text
        assert [r["title"] for r in found.structured_content["results"]] == ["Appleton"]
        assert "the words of 'Outagamie County' alone: 'outagamie' (2), 'county' (2)" in text, text
        plenty = await client.call_tool("keyword_search", {"keywords": ["county"]})
        assert "alone" not in plenty.content[0].text and "also as" not in plenty.content[0].text
