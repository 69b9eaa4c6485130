"""The tools' logic through the MCP SDK's in-memory client: conversations, bounds, errors, profiles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import index_dump
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.conversations import Conversations
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from brute_force import vector_ranking
from mcp import Client

from .conftest import HASHED_MODEL, SAMPLE, live_index

pytestmark = pytest.mark.anyio
RADIUM = f"{doc_key('radium')}-0"
POLONIUM = f"{doc_key('polonium')}-0"


@pytest.fixture(scope="module")
def live(hashed_sample_index: Path) -> Iterator[LiveIndex]:
    with live_index(hashed_sample_index) as live:
        yield live


def client_for(live: LiveIndex, profile: str = "arag", conversations: Conversations | None = None) -> Client:
    return Client(create_server(live, PROFILES[profile], conversations))


async def test_search_read_and_read_before_in_one_conversation(live: LiveIndex):
    async with client_for(live) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["pitchblende"], "top_k": 3})
        assert not found.is_error
        [hit] = found.structured_content["results"]
        assert hit["chunk_id"] == RADIUM and hit["title"] == "Radium" and hit["score"] == round(hit["score"], 2) > 0
        assert "pitchblende" in hit["snippet"] and "text" not in hit and hit["whole_chunk"] is True
        conversation = found.structured_content["conversation"]
        assert conversation.startswith("c-") and f'conversation="{conversation}"' in found.content[0].text

        semantic = await client.call_tool("semantic_search", {"query": "Which element glows faintly blue?", "top_k": 2})
        assert not semantic.is_error, semantic.content[0].text
        assert semantic.structured_content["results"][0]["chunk_id"] == RADIUM
        assert any("blue" in s for s in semantic.structured_content["results"][0]["sentences"])

        shown = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM], "conversation": conversation})
        assert shown.structured_content["chunks"][0]["status"] == "read_before"  # its search sent it whole

        first = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM]})
        [chunk] = first.structured_content["chunks"]
        assert chunk["status"] == "ok" and chunk["text"].startswith("Radium is a chemical element")
        assert chunk["text"] in first.content[0].text
        conversation = first.structured_content["conversation"]

        again = await client.call_tool("chunk_read", {"chunk_ids": RADIUM, "conversation": conversation})
        assert again.structured_content["chunks"] == [{"chunk_id": RADIUM, "status": "read_before"}]
        assert "This chunk has been read before" in again.content[0].text
        assert "Radium is a chemical element" not in again.content[0].text


async def test_read_before_is_only_said_to_the_conversation_that_received_the_text(live: LiveIndex):
    """Two conversations on one server (as two chats of one desktop host share its stdio process)."""
    async with client_for(live) as client:
        one = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM]})
        two = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM]})
        handles = [one.structured_content["conversation"], two.structured_content["conversation"]]
        assert handles[0] != handles[1]
        assert [r.structured_content["chunks"][0]["status"] for r in (one, two)] == ["ok", "ok"]
        for handle in handles:
            again = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM, POLONIUM], "conversation": handle})
            assert [c["status"] for c in again.structured_content["chunks"]] == ["read_before", "ok"]
            assert again.structured_content["conversation"] == handle


@pytest.mark.parametrize("handle", ["c-another", "c-AAAAAAAAAAAA", "x" * 5000, "'; DROP TABLE"])
async def test_a_handle_the_server_did_not_issue_starts_a_new_conversation(live: LiveIndex, handle: str):
    async with client_for(live) as client:
        result = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM], "conversation": handle})
        assert not result.is_error
        issued = result.structured_content["conversation"]
        assert issued != handle and issued.startswith("c-") and len(issued) == 14
        assert result.structured_content["chunks"][0]["status"] == "ok"
        message = result.structured_content["message"]
        assert "starts a new conversation" in message and len(message) < 300
        resumed = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM], "conversation": issued})
        assert resumed.structured_content["chunks"][0]["status"] == "read_before"
        assert "new conversation" not in resumed.structured_content["message"]


def test_idle_conversations_are_forgotten_after_their_idle_time():
    conversations = Conversations(idle_seconds=0.0)
    old = conversations.resume(None)
    fresh = conversations.resume(old.handle)
    assert fresh.handle != old.handle and "unknown or expired" in fresh.notice
    assert len(conversations) == 1


async def test_unknown_and_duplicate_ids(live: LiveIndex):
    async with client_for(live) as client:
        result = await client.call_tool("chunk_read", {"chunk_ids": ["nonsense", RADIUM, RADIUM, "aaaaaaaaaa-9"]})
        assert not result.is_error
        statuses = [(c["chunk_id"], c["status"]) for c in result.structured_content["chunks"]]
        assert statuses == [("nonsense", "not_found"), (RADIUM, "ok"), ("aaaaaaaaaa-9", "not_found")]
        assert "no such chunk" in result.content[0].text


BAD_CALLS = [
    ("keyword_search", {"keywords": []}, "keywords is empty"),
    ("keyword_search", {"keywords": ["   "]}, "keywords is empty"),
    ("keyword_search", {"keywords": [" ".join(["word"] * 40)]}, "40-word sentence"),
    ("keyword_search", {"keywords": ["radium"], "top_k": 0}, "top_k must be a whole number from 1 to 20; got 0"),
    ("keyword_search", {"keywords": ["radium"], "top_k": 21}, "got 21"),
    ("keyword_search", {"keywords": ["radium"], "top_k": -1}, "got -1"),
    ("keyword_search", {"keywords": ["radium"], "top_k": "five"}, 'got "five"'),
    ("keyword_search", {}, "keywords must be a list of short terms"),
    ("keyword_search", {"keywords": ["radium"], "conversation": 7}, "conversation must be the handle string"),
    ("semantic_search", {"query": ""}, "query is empty"),
    ("semantic_search", {"query": "x" * 10_000}, "10000 characters"),
    ("semantic_search", {"query": "radium", "top_k": 21}, "top_k must be"),
    ("chunk_read", {"chunk_ids": []}, "chunk_ids is empty"),
    ("chunk_read", {"chunk_ids": [f"{doc_key('x')}-{i}" for i in range(1000)]}, "holds 1000 ids"),
    ("chunk_read", {"chunk_ids": 42}, "chunk_ids must be a list"),
    ("keyword_search", {"keywords": ["radium"], "topk": 1}, "no argument \"topk\" (did you mean 'top_k'?)"),
    ("keyword_search", {"kewords": ["radium"]}, "(did you mean 'keywords'?); its arguments are keywords, top_k"),
    ("chunk_read", {"chunk_ids": ["x"], "x" * 5000: 1}, "chunk_read takes no argument"),
]


async def test_bad_input_gets_one_line_errors_and_the_server_keeps_working(live: LiveIndex):
    async with client_for(live) as client:
        for tool, arguments, expected in BAD_CALLS:
            result = await client.call_tool(tool, arguments)
            text = result.content[0].text
            assert result.is_error, (tool, arguments)
            assert expected in text, (tool, text)
            assert "\n" not in text and "Traceback" not in text and len(text) < 300, text
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        assert all(schema["additionalProperties"] is False for schema in listed.values()), listed
        works = await client.call_tool("keyword_search", {"keyword": "pitchblende", "top_k": "3"})
        assert not works.is_error and works.structured_content["results"][0]["chunk_id"] == RADIUM


async def test_chunk_read_is_bounded_and_names_what_it_held_back(tmp_path: Path):
    corpus = tmp_path / "long.jsonl"
    sentence = "The archive keeps letters, maps and ledgers from the old harbour office for later study. "
    with corpus.open("w") as handle:
        for number in range(12):
            handle.write(json.dumps({"id": f"doc{number}", "title": f"Doc {number}", "text": sentence * 50}) + "\n")
    index = tmp_path / "idx"
    Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
    ids = [f"{doc_key(f'doc{number}')}-0" for number in range(12)]
    with live_index(index, load_model=False) as live:
        async with client_for(live) as client:
            result = await client.call_tool("chunk_read", {"chunk_ids": ids})
            chunks = result.structured_content["chunks"]
            sent = [c["chunk_id"] for c in chunks if c["status"] == "ok"]
            held_back = [c["chunk_id"] for c in chunks if c["status"] == "not_sent"]
            assert sent and held_back and sent + held_back == ids
            assert sum(len(c["text"]) for c in chunks if c["status"] == "ok") <= 40_000
            assert all(cid in result.content[0].text for cid in held_back)
            assert "call chunk_read again" in result.content[0].text
            conversation = result.structured_content["conversation"]
            rest = await client.call_tool("chunk_read", {"chunk_ids": held_back, "conversation": conversation})
            assert [c["status"] for c in rest.structured_content["chunks"]] == ["ok"] * len(held_back)


async def test_naive_embedding_search_returns_whole_chunks_ranked_by_chunk_vectors(live: LiveIndex, hashed_embedder):
    snapshot = open_index(live.uri)
    ids, vectors = index_dump.chunk_vectors(snapshot)
    texts = {c.chunk_id: c.text for c in index_dump.all_chunks(snapshot)}
    async with client_for(live, "naive") as client:
        question = "Which element was named after Poland?"
        result = await client.call_tool("naive_embedding_search", {"query": question, "top_k": 3})
        assert not result.is_error, result.content[0].text
        expected = vector_ranking(ids, vectors, hashed_embedder.encode_queries([question])[0], 3)
        results = result.structured_content["results"]
        assert [r["chunk_id"] for r in results] == [cid for cid, _ in expected]
        assert [r["score"] for r in results] == pytest.approx([score for _, score in expected], abs=1e-4)
        assert all(r["status"] == "ok" and r["text"] == texts[r["chunk_id"]] for r in results)
        assert texts[results[0]["chunk_id"]] in result.content[0].text
        conversation = result.structured_content["conversation"]
        again = await client.call_tool(
            "naive_embedding_search", {"query": question, "top_k": 3, "conversation": conversation}
        )
        shown = [r["chunk_id"] for r in results]
        assert [(p["rank"], p["chunk_id"]) for p in again.structured_content["passed_over"]] == list(
            zip((1, 2, 3), shown)
        )
        assert all(r["status"] == "ok" and r["chunk_id"] not in shown for r in again.structured_content["results"])
        read = await client.call_tool(
            "chunk_read", {"chunk_ids": [results[0]["chunk_id"]], "conversation": conversation}
        )
        assert read.structured_content["chunks"][0]["status"] == "read_before"


async def test_no_read_profile_searches_return_whole_chunks(live: LiveIndex):
    async with client_for(live, "no-read") as client:
        found = await client.call_tool("keyword_search", {"keywords": ["pitchblende", "Poland"]})
        results = found.structured_content["results"]
        assert {r["chunk_id"] for r in results} >= {RADIUM}
        radium = next(r for r in results if r["chunk_id"] == RADIUM)
        assert radium["status"] == "ok" and radium["text"].startswith("Radium is a chemical element")
        assert radium["text"] in found.content[0].text and "chunk_read" not in found.content[0].text
        conversation = found.structured_content["conversation"]
        semantic = await client.call_tool(
            "semantic_search", {"query": "glows faintly blue", "conversation": conversation}
        )
        assert semantic.structured_content["passed_over"][0] == {"rank": 1, "chunk_id": RADIUM, "title": "Radium"}
        assert all(r["chunk_id"] != RADIUM and r["status"] == "ok" for r in semantic.structured_content["results"])


async def test_each_profile_describes_only_its_own_tools(live: LiveIndex):
    every_tool = {"keyword_search", "semantic_search", "chunk_read", "naive_embedding_search"}
    for name, profile in PROFILES.items():
        async with client_for(live, name) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert list(tools) == profile.tool_names, name
            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == [profile.prompt_name]
            prompt = await client.get_prompt(profile.prompt_name, {"question": "Who found radium?"})
            prompt_text = prompt.messages[0].content.text
            assert prompt_text.endswith("Question: Who found radium?")
            manifest = json.loads((await client.read_resource("arag://index")).contents[0].text)
            assert manifest["profile"] == name and manifest["tools"] == profile.tool_names
            missing = every_tool - set(tools)
            texts = [tool.description for tool in tools.values()] + [prompt_text]
            for text in texts:
                assert not any(other in text for other in missing), (name, text[:80])
            for tool in tools.values():
                assert tool.annotations.read_only_hint is True and tool.output_schema and tool.title
                assert tool.input_schema["properties"]["conversation"]


async def test_resources_list_the_documents_and_hide_machine_paths(live: LiveIndex):
    async with client_for(live) as client:
        listed = json.loads((await client.read_resource("arag://documents")).contents[0].text)
        assert listed["documents"] == 6 and len(listed["list"]) == 6
        radium = next(d for d in listed["list"] if d["title"] == "Radium")
        assert radium["source"] == "sample/elements.jsonl" and radium["chunks"] == 1
        assert all("doc_id" not in d and not d["source"].startswith("/") for d in listed["list"])
        manifest = (await client.read_resource("arag://index")).contents[0].text
        assert "sources" not in json.loads(manifest)
        assert str(SAMPLE.resolve()) not in manifest
