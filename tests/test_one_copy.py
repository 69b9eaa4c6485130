"""One conversation, one copy: text a conversation was sent (a whole chunk, a snippet sentence, a
document line) comes back as a one-line reference in its place; find merges touching passages; long
table and infobox lines are cut around the match (through the MCP SDK's in-memory client)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search import snippets
from arag_mcp.server.search.conversations import Conversations
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client

from .conftest import HASHED_MODEL, live_index

pytestmark = pytest.mark.anyio
POLONIUM = f"{doc_key('polonium')}-0"
RADIUM = f"{doc_key('radium')}-0"
LAMPARD = f"{doc_key('m00158')}-0"
HARBOUR = doc_key("harbour")
CURIE = f"{doc_key('curie')}-0"
CURIE_LIFE = [  # a chunk long enough to be sent in snippets
    "Maria Salomea Sklodowska was born in Warsaw on 7 November 1867.",
    "She studied at the clandestine Flying University before moving to Paris in 1891.",
    "At the University of Paris she earned degrees in physics and mathematics.",
    "In 1895 Maria married the physicist Pierre Curie.",
    "Working together, the couple discovered polonium in July 1898 and named it after Poland.",
    "A second discovery, radium, followed in December 1898.",
    "The couple shared the 1903 Nobel Prize in Physics with Henri Becquerel.",
    "After an accident in April 1906 Pierre Curie died in the streets of Paris.",
    "Marie Curie won a second Nobel Prize, in Chemistry, in 1911.",
    "Marie died of aplastic anaemia on 4 July 1934 at a sanatorium in Passy.",
]
LAMPARD_INFOBOX = (  # a Wikipedia infobox as MuSiQue's corpus holds it: one line of 748 characters
    "Frank Lampard OBE Lampard with Chelsea in 2008 Full name Frank James Lampard Date of birth (1978 - 06 - 20) "
    "20 June 1978 (age 40) Place of birth Romford, England Height 6 ft 0 in (1.84 m) Playing position Midfielder "
    "Club information Current team Derby County (manager) Youth career 1994 -- 1995 West Ham United Senior career "
    "* Years Team Apps (Gls) 1995 -- 2001 West Ham United 148 (24) 1995 -- 1996 \u2192 Swansea City (loan) 9 (1) "
    "2001 -- 2014 Chelsea 429 (147) 2014 -- 2015 Manchester City 32 (6) 2015 -- 2016 New York City 29 (15) Total "
    "647 (193) National team 1997 -- 2000 England U21 19 (9) 1998 England B (0) 1999 -- 2014 England 106 (29) "
    "Teams managed 2018 -- Derby County * Senior club appearances and goals counted for the domestic league only"
)
HARBOUR_LOG = [
    "Monday: the ferry left at dawn.",
    "Tuesday: a storm closed the harbour.",
    "Wednesday: repairs on the north pier.",
    "Thursday: the harbour opened again.",
    "Friday: a cargo of timber arrived.",
    "Saturday: the market filled the quay.",
    "Sunday: no ships moved.",
    "Monday: fishing boats returned.",
    "Tuesday: the lighthouse was painted.",
    "Wednesday: the harbour master retired.",
]


@pytest.fixture(scope="module")
def sample(hashed_sample_index: Path) -> Iterator[LiveIndex]:
    with live_index(hashed_sample_index) as live:
        yield live


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> Iterator[LiveIndex]:
    """An infobox line, a harbour log of short lines, and an unrelated page."""
    corpus = tmp_path_factory.mktemp("records")
    rows = [
        {"id": "m00158", "title": "Frank Lampard", "text": LAMPARD_INFOBOX},
        {"id": "harbour", "title": "Harbour log", "text": "\n".join(HARBOUR_LOG)},
        {"id": "weather", "title": "Weather", "text": "Rain fell for most of the week. The wind came from the west."},
        {"id": "curie", "title": "Marie Curie", "text": " ".join(CURIE_LIFE)},
    ]
    (corpus / "records.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    index = tmp_path_factory.mktemp("records-index") / "idx"
    Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
    with live_index(index) as live:
        yield live


def client_for(live: LiveIndex, profile: str, conversations: Conversations | None = None) -> Client:
    return Client(create_server(live, PROFILES[profile], conversations))


SEARCHES = [
    ("arag-plus", "semantic_search", {"queries": ["who discovered polonium", "a blue glow"]}, "sentences"),
    ("agentic", "search", {"queries": ["who discovered polonium", "a blue glow"]}, "snippet"),
]
"""Merged searches keep each result's place; the others give the places to new text (below)."""
MOVING_ON = [
    ("arag", "keyword_search", {"keywords": ["Curie", "1898"], "top_k": 2}, "snippet"),
    ("arag", "semantic_search", {"query": "who discovered polonium", "top_k": 2}, "sentences"),
    ("no-read", "keyword_search", {"keywords": ["Curie", "1898"], "top_k": 2}, "text"),
    ("naive", "naive_embedding_search", {"query": "who discovered polonium", "top_k": 2}, "text"),
]


@pytest.mark.parametrize(("profile", "tool", "arguments", "body"), MOVING_ON)
async def test_the_same_search_again_gives_its_places_to_new_text_in_that_conversation_only(
    sample: LiveIndex, profile: str, tool: str, arguments: dict, body: str
):
    async with client_for(sample, profile) as client:
        first = await client.call_tool(tool, arguments)
        results = first.structured_content["results"]
        conversation = first.structured_content["conversation"]
        assert len(results) == 2 and all(r[body] and "already_sent" not in r for r in results)

        again = await client.call_tool(tool, {**arguments, "conversation": conversation})
        shown = [r["chunk_id"] for r in results]
        passed = again.structured_content["passed_over"]
        assert [p["chunk_id"] for p in passed] == shown and [p["rank"] for p in passed] == [1, 2]
        repeated = again.structured_content["results"]
        assert repeated and all(r["chunk_id"] not in shown and r[body] for r in repeated)
        text = again.content[0].text
        assert f"[1] {shown[0]} ({results[0]['title']})" in text and "Left out" in text

        other = await client.call_tool(tool, arguments)
        assert other.structured_content["results"] == results


@pytest.mark.parametrize(("profile", "tool", "arguments", "body"), SEARCHES)
async def test_the_same_search_again_answers_with_references_in_that_conversation_only(
    sample: LiveIndex, profile: str, tool: str, arguments: dict, body: str
):
    async with client_for(sample, profile) as client:
        first = await client.call_tool(tool, arguments)
        results = first.structured_content["results"]
        conversation = first.structured_content["conversation"]
        assert results and all(r[body] and "already_sent" not in r for r in results)

        again = await client.call_tool(tool, {**arguments, "conversation": conversation})
        repeated = again.structured_content["results"]
        key = "ref" if profile == "agentic" else "chunk_id"
        assert [r[key] for r in repeated] == [r[key] for r in results]
        assert all(r["already_sent"] is True and body not in r and "text" not in r for r in repeated)
        text = again.content[0].text
        for rank, result in enumerate(results, 1):
            assert f"[{rank}] {result[key]} | {result['title']} — already sent" in text
        assert len(text) < 1000 and "already sent" in again.structured_content["message"]

        other = await client.call_tool(tool, arguments)
        assert other.structured_content["results"] == results


async def test_a_snippet_sends_only_the_sentences_its_conversation_was_not_sent(records: LiveIndex):
    conversations = Conversations()
    async with client_for(records, "arag", conversations) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["polonium"]})
        conversation = found.structured_content["conversation"]
        [curie] = found.structured_content["results"]
        assert (
            curie["chunk_id"] == CURIE and curie["snippet"] == CURIE_LIFE[4] and curie["extent"] == "1 of 10 sentences"
        )
        remembered = conversations.remembered_bytes

        semantic = await client.call_tool(
            "semantic_search", {"query": "who discovered polonium", "conversation": conversation, "top_k": 1}
        )
        [again] = semantic.structured_content["results"]
        assert again["chunk_id"] == CURIE and again["sentences_already_sent"] == 1
        assert CURIE_LIFE[4] not in again["sentences"] and CURIE_LIFE[4] not in semantic.content[0].text
        assert "(+1 matched sentence already sent)" in semantic.content[0].text
        assert again["extent"] == f"{len(again['sentences'])} of 10 sentences"
        assert conversations.remembered_bytes > remembered

        fresh = await client.call_tool("semantic_search", {"query": "who discovered polonium", "top_k": 1})
        [unsent] = fresh.structured_content["results"]
        assert CURIE_LIFE[4] in unsent["sentences"] and "sentences_already_sent" not in unsent

        read = await client.call_tool("chunk_read", {"chunk_ids": [CURIE], "conversation": conversation})
        assert read.structured_content["chunks"][0]["status"] == "ok"
        after = await client.call_tool("keyword_search", {"keywords": ["Poland"], "conversation": conversation})
        assert CURIE not in [r["chunk_id"] for r in after.structured_content["results"]]
        assert CURIE in [p["chunk_id"] for p in after.structured_content["passed_over"]]


async def test_lines_a_conversation_opened_make_its_search_results_references(sample: LiveIndex):
    async with client_for(sample, "agentic") as client:
        opened = await client.call_tool("open", {"ref": RADIUM})
        conversation = opened.structured_content["conversation"]
        found = await client.call_tool(
            "search", {"queries": ["which element glows blue"], "conversation": conversation}
        )
        radium = next(r for r in found.structured_content["results"] if r["ref"] == RADIUM)
        assert radium["already_sent"] is True and "snippet" not in radium


async def test_find_merges_passages_that_overlap_or_touch(records: LiveIndex):
    async with client_for(records, "agentic") as client:
        found = await client.call_tool("find", {"ref": HARBOUR, "patterns": ["harbour", "Tuesday"]})
        harbour, tuesday = found.structured_content["patterns"]
        first = HARBOUR_LOG.index("Tuesday: a storm closed the harbour.")
        assert harbour["match_lines"][:2] == [first, first + 2]
        [passage] = harbour["passages"]  # lines 0-3 and 1-5 are one passage
        assert (passage["first_line"], passage["last_line"]) == (0, first + 4)
        numbers = [int(line.split(":", 1)[0]) for line in passage["text"].splitlines()]
        assert numbers == list(range(0, first + 5))
        assert [(p["first_line"], p["last_line"]) for p in tuesday["passages"]] == [(6, 9)]  # 0-3 was given


async def test_a_long_infobox_line_is_cut_around_the_keywords(records: LiveIndex, monkeypatch: pytest.MonkeyPatch):
    """The 748-character infobox is a short chunk, sent whole; in a chunk too long for that (here the
    bound is lowered to 600 characters), the line is cut around the keywords."""
    async with client_for(records, "arag") as client:
        whole = await client.call_tool("keyword_search", {"keywords": ["Swansea City"]})
        assert whole.structured_content["results"][0]["whole_chunk"] is True
    monkeypatch.setattr(snippets, "WHOLE_CHUNK_CHARS", 600)
    async with client_for(records, "arag") as client:
        found = await client.call_tool("keyword_search", {"keywords": ["Swansea City"]})
        [result] = found.structured_content["results"]
        snippet = result["snippet"]
        assert result["chunk_id"] == LAMPARD and "whole_chunk" not in result
        assert "Swansea City" in snippet and snippet.startswith("… ") and snippet.endswith(" …")
        assert snippet[2:-2] in LAMPARD_INFOBOX and len(snippet) <= 320

        twice = await client.call_tool("keyword_search", {"keywords": ["derby county"]})
        windows = twice.structured_content["results"][0]["snippet"].strip("… ").split(" … ")
        assert len(windows) == 2 and all("Derby County" in w and w in LAMPARD_INFOBOX for w in windows)
        assert LAMPARD_INFOBOX.index(windows[0]) < LAMPARD_INFOBOX.index(windows[1])

        semantic = await client.call_tool("semantic_search", {"query": "Frank Lampard's place of birth", "top_k": 1})
        [sentence] = semantic.structured_content["results"][0]["sentences"]
        assert sentence.endswith(" …") and LAMPARD_INFOBOX.startswith(sentence[:-2]) and 250 <= len(sentence) <= 302


async def test_search_looks_up_exact_names_and_shows_an_absence_in_one_call(sample: LiveIndex):
    async with client_for(sample, "agentic") as client:
        arguments = {"queries": ["Pierre Curie's work on magnetism"], "top_k": 1, "keywords": ["pitchblende", "Zyxwv"]}
        found = await client.call_tool("search", arguments)
        assert not found.is_error, found.content[0].text
        output = found.structured_content
        assert output["keyword_counts"] == [{"keyword": "pitchblende", "chunks": 1}, {"keyword": "Zyxwv", "chunks": 0}]
        assert "'Zyxwv': 0 chunks" in output["message"] and "'Zyxwv': 0 chunks" in found.content[0].text
        semantic, radium = output["results"]
        assert semantic["queries"] == [0] and semantic["ref"] != RADIUM and "keywords" not in semantic
        assert radium["ref"] == RADIUM and radium["queries"] == [] and "score" not in radium
        [expected] = keyword_search(sample.snapshot(), ["pitchblende", "Zyxwv"], 5).hits
        assert expected.chunk.chunk_id == RADIUM and expected.score > 0
        assert radium["keywords"] == ["pitchblende"] and radium["keyword_score"] == round(expected.score, 2)
        assert "pitchblende" in radium["snippet"]
        assert (
            f"ref: {RADIUM}" in found.content[0].text
            and f"keywords: 'pitchblende' (score {round(expected.score, 2)})" in found.content[0].text
        )
