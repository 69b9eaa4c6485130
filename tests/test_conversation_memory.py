"""What conversations remember is bounded in bytes: lines sent are held as runs, and past the byte
budget the least recently used conversation is forgotten (through the MCP SDK's in-memory client)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search import within_document
from arag_mcp.server.search.conversations import Conversations, Origin
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client

from .conftest import HASHED_MODEL, live_index

pytestmark = pytest.mark.anyio
LEDGER = doc_key("ledger")


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> Path:
    """An index of one document of 3,000 short lines (one paragraph: few sentences to embed)."""
    corpus = tmp_path_factory.mktemp("ledger")
    text = "\n".join(f"entry {n}" for n in range(3000))
    (corpus / "ledger.jsonl").write_text(json.dumps({"id": "ledger", "title": "Ledger", "text": text}) + "\n")
    index = tmp_path_factory.mktemp("ledger-index") / "idx"
    Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
    return index


def test_an_open_window_is_remembered_in_a_few_hundred_bytes(ledger: Path):
    # No server threads here: tracemalloc swaps the allocators of every thread when it starts and
    # stops, and a thread allocating meanwhile (LanceDB's, loading vectors) can crash the process.
    document = open_index(str(ledger)).documents.get(LEDGER)
    window = within_document.window(document, 0)
    conversations = Conversations()
    conversation = conversations.resume(None)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        conversations.mark_lines_shown(conversation, document, window, Origin(conversation.calls, "open"))
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(window) == within_document.WINDOW_LINES
    assert kept < 4096, f"one open window of {len(window)} lines is remembered in {kept} bytes"
    assert conversations.lines_seen(conversation, document) == dict.fromkeys(window, Origin(1, "open"))


async def test_past_the_byte_budget_the_least_recently_used_conversation_is_forgotten(ledger: Path):
    conversations = Conversations()
    with live_index(ledger, load_model=False) as live:
        async with Client(create_server(live, PROFILES["agentic"], conversations)) as client:

            async def open_in(conversation: str | None = None) -> dict:
                result = await client.call_tool(
                    "open", {"ref": LEDGER, **({"conversation": conversation} if conversation else {})}
                )
                assert not result.is_error, result.content[0].text
                return result.structured_content

            first = await open_in()
            conversations.max_bytes = int(2.5 * conversations.remembered_bytes)  # room for two such conversations
            second, third = await open_in(), await open_in()

            assert len(conversations) == 2 and conversations.remembered_bytes <= conversations.max_bytes
            again = await open_in(third["conversation"])
            assert again["conversation"] == third["conversation"] and "already in this conversation" in again["text"]
            forgotten = await open_in(first["conversation"])
            assert forgotten["conversation"] not in (first["conversation"], second["conversation"])
            assert "unknown or expired" in forgotten["message"] and "already in" not in forgotten["text"]
