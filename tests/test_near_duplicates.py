"""Near-duplicate results (server/search/near_duplicates.py): a chunk whose sentences are nearly all
those of a result ranked above it takes no place of its own and is named with that result; a short
chunk held inside a longer one is not a duplicate of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from mcp import Client

from .conftest import HASHED_MODEL, live_index, titled_records_index

pytestmark = pytest.mark.anyio
PARAGRAPH = [
    "Thelma and Louise is a 1991 road film directed by Ridley Scott.",
    "It was written by Callie Khouri.",
    "Geena Davis plays Thelma and Susan Sarandon plays Louise.",
    "The film became a critical and commercial success.",
    "It received six Academy Award nominations.",
]
RECORDS = [
    ("Thelma & Louise", " ".join(PARAGRAPH)),
    ("Thelma & Louise (copy)", " ".join(PARAGRAPH)),  # the same text
    ("Thelma and Louise", " ".join([*PARAGRAPH[:4], "Khouri won the Academy Award for Best Original Screenplay."])),
    ("Callie Khouri", "Callie Khouri wrote Thelma and Louise. She was born in Texas in 1957."),
    ("Ridley Scott", "Ridley Scott directed Alien, Blade Runner and Thelma and Louise."),
    ("Road films", PARAGRAPH[0]),  # one sentence of the paragraph: held inside it, not its duplicate
]


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[LiveIndex]:
    with live_index(titled_records_index(tmp_path_factory.mktemp("twins"), RECORDS, HASHED_MODEL)) as live:
        yield live


def titles(result) -> list[str]:  # noqa: ANN001 - the SDK's result
    return [r["title"] for r in result.structured_content["results"]]


@pytest.mark.parametrize("tool", ["keyword_search", "semantic_search"])
async def test_near_duplicates_take_no_place_and_are_named_with_the_result_they_repeat(live: LiveIndex, tool: str):
    arguments = (
        {"keywords": ["Thelma"], "top_k": 4}
        if tool == "keyword_search"
        else {"query": "Who directed the road film Thelma and Louise?", "top_k": 4}
    )
    async with Client(create_server(live)) as client:
        found = await client.call_tool(tool, arguments)
    shown = titles(found)
    twins = {"Thelma & Louise", "Thelma & Louise (copy)", "Thelma and Louise"}
    assert len(shown) == 4 and len(twins & set(shown)) == 1, shown
    assert {"Callie Khouri", "Ridley Scott", "Road films"} <= set(shown), shown
    message = found.structured_content["message"]
    assert "Left out as nearly the same text as a result shown" in message, message
    left_out = twins - set(shown)
    assert all(title in message for title in left_out), message
