"""What a search result shows of its chunk, through the MCP SDK's in-memory client: a short chunk
whole, a long one's matched sentences with how many of its sentences they are, the sentence before
one that opens with a pronoun, long sentences never cut inside a date; in `agentic`, how long each
result's document is, and where lines a conversation has were sent."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.search.snippets import LONG_SENTENCE_CHARS, WHOLE_CHUNK_CHARS, WHOLE_CHUNK_SENTENCES
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client

from .conftest import HASHED_MODEL, live_index

pytestmark = pytest.mark.anyio
BURSTALL = "Tim Burstall was an Australian film director. He was born in Stockton-on-Tees, England. His films include Alvin Purple."
MARLOW = [
    "Edith Marlow was an English aviator and engineer from Norwich.",
    "Her father ran a bicycle workshop near the cathedral.",
    "Marlow learned to fly at Hendon in the spring of 1978.",
    "Her first long flight took her from Norwich to Reykjavik.",
    "The flight lasted eleven hours and ended in fog.",
    "Marlow then crossed the Atlantic with the navigator Ruth Ames in 1988.",
    "In May 1990 she repeated the crossing alone, in a single-engine Beaver.",
    "The newspapers of Halifax printed her logbook in full.",
    "Marlow later designed light aircraft for a firm in Derby.",
    "Marlow retired to the Norfolk coast and wrote a memoir of her flights.",
]
LABEL = "Zanzibar Records"
FOUNDED = "4 July 1934"
SIGNED = "11 March 1990"


def filler(length: int) -> str:
    """Words without digits or month names, exactly `length` characters, between spaces."""
    words = ("the label sold tapes to sailors and students on the island " * 20)[: length - 2]
    return f" {words} "


# One long sentence (an infobox line) whose keyword window, CONTEXT_CHARS either side of the label,
# would open inside "4 July 1934" and close inside "11 March 1990" (after its "11").
INFOBOX = (
    "Label information " + filler(300)[1:] + FOUNDED + filler(51) + LABEL + filler(55) + SIGNED + filler(300)[:-1] + "."
)
# What follows the infobox line (and the budget line) on its page: the page is then too long to be sent whole.
LABEL_HISTORY = "Penguins" + " waddle over the cold rocks near the southern ice" * 9 + "."
# One long sentence whose first LONG_SENTENCE_CHARS characters end inside "2.5 million" (after "2.5").
AMOUNT = "2.5 million"
BUDGET = "The harbour budget" + filler(LONG_SENTENCE_CHARS - 4 - 18) + AMOUNT + filler(400)[:-1] + "."


# A paragraph hard-wrapped inside its sentences, as plain text and Markdown often are.
WRAPPED = (
    "The keeper of the Skerry light\nrecorded every storm in his\n    logbook for forty years. He retired in 1950."
)


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[LiveIndex]:
    corpus = tmp_path_factory.mktemp("snippets")
    rows = [
        {"id": "burstall", "title": "Tim Burstall", "text": BURSTALL},
        {"id": "marlow", "title": "Edith Marlow", "text": " ".join(MARLOW)},
        {"id": "zanzibar", "title": "Zanzibar Records", "text": f"{INFOBOX} {LABEL_HISTORY}"},
        {"id": "budget", "title": "Harbour budget", "text": f"{BUDGET} {LABEL_HISTORY}"},
        {"id": "keeper", "title": "Skerry light", "text": WRAPPED},
    ]
    (corpus / "pages.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    index = tmp_path_factory.mktemp("snippets-index") / "idx"
    Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
    with live_index(index) as live:
        yield live


def client_for(live: LiveIndex, profile: str) -> Client:
    return Client(create_server(live, PROFILES[profile]))


def ref(name: str) -> str:
    return f"{doc_key(name)}-0"


def test_the_texts_are_what_the_tests_need():
    assert len(MARLOW) > WHOLE_CHUNK_SENTENCES and len(INFOBOX) > LONG_SENTENCE_CHARS
    assert (
        len(f"{INFOBOX} {LABEL_HISTORY}") > WHOLE_CHUNK_CHARS and len(f"{BUDGET} {LABEL_HISTORY}") > WHOLE_CHUNK_CHARS
    )
    window = INFOBOX.index(LABEL)
    assert INFOBOX.index(FOUNDED) == window - 62 and INFOBOX.index(SIGNED) == window + len(LABEL) + 55
    assert BUDGET.index(AMOUNT) == LONG_SENTENCE_CHARS - 4


async def test_a_three_sentence_chunk_is_sent_whole_by_every_search(live: LiveIndex):
    async with client_for(live, "arag") as client:
        keyword = await client.call_tool("keyword_search", {"keywords": ["Alvin Purple"]})
        [result] = keyword.structured_content["results"]
        assert result["chunk_id"] == ref("burstall") and result["snippet"] == BURSTALL
        assert result["whole_chunk"] is True and "extent" not in result
        assert "(whole chunk)" in keyword.content[0].text and "partial" not in keyword.content[0].text

        semantic = await client.call_tool("semantic_search", {"query": "Where was Tim Burstall born?", "top_k": 1})
        [result] = semantic.structured_content["results"]
        assert result["chunk_id"] == ref("burstall") and " ".join(result["sentences"]) == BURSTALL
        assert result["whole_chunk"] is True and f"matched: {BURSTALL}" in semantic.content[0].text

        read = await client.call_tool(
            "chunk_read", {"chunk_ids": [ref("burstall")], "conversation": semantic.structured_content["conversation"]}
        )
        assert read.structured_content["chunks"][0]["status"] == "read_before"


async def test_a_long_chunk_snippet_says_how_many_of_its_sentences_it_shows(live: LiveIndex):
    async with client_for(live, "arag") as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Halifax"]})
        [result] = found.structured_content["results"]
        assert result["snippet"] == MARLOW[7] and result["extent"] == "1 of 10 sentences"
        assert "whole_chunk" not in result
        text = found.content[0].text
        assert "(1 of 10 sentences)" in text and "'k of n sentences' is partial" in text

        semantic = await client.call_tool("semantic_search", {"query": "Edith Marlow's flights", "top_k": 1})
        [result] = semantic.structured_content["results"]
        assert result["extent"] == f"{len(result['sentences'])} of 10 sentences" and len(result["sentences"]) < 10


async def test_a_sentence_wrapped_over_lines_is_one_line_in_a_snippet_and_keeps_its_layout_when_read(
    live: LiveIndex,
):
    async with client_for(live, "arag") as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Skerry"]})
        [result] = found.structured_content["results"]
        assert result["snippet"].startswith("The keeper of the Skerry light recorded every storm in his logbook")
        assert "\n" not in result["snippet"]
        read = await client.call_tool("chunk_read", {"chunk_ids": [ref("keeper")], "again": True})
        assert "Skerry light\nrecorded" in read.structured_content["chunks"][0]["text"]


async def test_a_sentence_opening_with_a_pronoun_comes_with_the_one_before(live: LiveIndex):
    async with client_for(live, "arag") as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Beaver"]})
        [result] = found.structured_content["results"]
        assert result["snippet"] == f"{MARLOW[5]} ... {MARLOW[6]}"  # "In May 1990 she ...": she is Marlow
        assert result["extent"] == "2 of 10 sentences"

    async with client_for(live, "agentic") as client:
        found = await client.call_tool(
            "search", {"queries": ["aircraft designers"], "keywords": ["Beaver"], "top_k": 1}
        )
        marlow = next(r for r in found.structured_content["results"] if r["ref"] == ref("marlow"))
        assert MARLOW[5] in marlow["snippet"] and MARLOW[6] in marlow["snippet"]


async def test_a_long_sentence_is_never_cut_inside_a_date_or_number(live: LiveIndex):
    async with client_for(live, "arag") as client:
        found = await client.call_tool("keyword_search", {"keywords": [LABEL]})
        [result] = found.structured_content["results"]
        snippet = result["snippet"]
        assert snippet.startswith(f"… {FOUNDED} ") and snippet.endswith(f" {SIGNED} …")
        assert snippet[2:-2] in INFOBOX and result["extent"] == "1 of 2 sentences, cut"

        semantic = await client.call_tool("semantic_search", {"query": "the harbour budget", "top_k": 5})
        budget = next(r for r in semantic.structured_content["results"] if r["chunk_id"] == ref("budget"))
        assert budget["sentences"][0] == BUDGET[: BUDGET.index(AMOUNT) + len(AMOUNT)] + " …"  # not "2.5 …"


async def test_agentic_search_tells_each_documents_length_and_marks_a_whole_document(live: LiveIndex):
    async with client_for(live, "agentic") as client:
        found = await client.call_tool("search", {"queries": ["Australian film director", "aviator"], "top_k": 3})
        results = {r["ref"]: r for r in found.structured_content["results"]}
        short, long = results[ref("burstall")], results[ref("marlow")]
        assert short["document_lines"] == 1 and short["whole_document"] is True and short["snippet"] == BURSTALL
        marlow = live.snapshot().documents.get(ref("marlow"))
        assert long["document_lines"] == len(marlow.lines) > 1 and "whole_document" not in long
        assert long["extent"].endswith("of 10 sentences")
        text = found.content[0].text
        assert f"ref: {ref('burstall')} | title: Tim Burstall | file: pages.jsonl (jsonl, 1 line)" in text
        assert "(whole document)" in text and f"(jsonl, {len(marlow.lines)} lines)" in text


async def test_lines_a_conversation_has_are_named_with_the_call_that_sent_them(live: LiveIndex):
    async with client_for(live, "agentic") as client:
        found = await client.call_tool("search", {"queries": ["Australian film director"], "top_k": 1})
        [result] = found.structured_content["results"]
        assert result["ref"] == ref("burstall") and result["whole_document"] is True
        conversation = found.structured_content["conversation"]

        opened = await client.call_tool("open", {"ref": ref("burstall"), "conversation": conversation})
        assert opened.structured_content["text"] == (
            "[lines 0–0: already in this conversation, sent by call 1 (search, result [1])]"
        )
        first = await client.call_tool(
            "find", {"ref": ref("marlow"), "patterns": ["Reykjavik"], "conversation": conversation}
        )
        assert first.structured_content["patterns"][0]["passages"][0]["status"] == "ok"
        again = await client.call_tool(
            "find", {"ref": ref("marlow"), "patterns": ["Reykjavik"], "conversation": conversation}
        )
        [passage] = again.structured_content["patterns"][0]["passages"]
        assert passage["status"] == "shown_before" and passage["sent_by"] == ["call 3 (find)"]
        assert f"{passage['last_line']}: already in this conversation, sent by call 3 (find)" in again.content[0].text

    async with client_for(live, "arag-plus") as client:
        read = await client.call_tool("chunk_read", {"chunk_ids": [ref("marlow")]})
        opened = await client.call_tool(
            "open", {"ref": ref("marlow"), "conversation": read.structured_content["conversation"]}
        )
        assert opened.structured_content["text"].endswith("already in this conversation, sent by call 1 (chunk_read)]")
