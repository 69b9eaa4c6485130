"""What a server serves, as its tools reach it: the MCP lifespan's object (ServedIndex), read by each
tool through its Context.

The lifespan yields an index already open and never closes it: the SDK enters a server's lifespan
once per run over stdio and in memory, once per process over streamable HTTP, but once per
connection over SSE. Whoever made the index opens and closes it (cli.main, a test's fixture).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordMatch
    from arag_mcp.server.search.conversations import Conversations
    from arag_mcp.server.search.live_index import LiveIndex
    from mcp.server.mcpserver import Context, MCPServer


@dataclass(frozen=True)
class ServedIndex:
    """The index a server serves and how: its conversations, what a keyword match is (the keyword
    engine: arag_mcp.indexer.index.keywords), whether searches send whole chunks (the profile's
    full_text) and what the watcher keeping the index current is doing (arag-mcp --watch)."""

    live: LiveIndex
    conversations: Conversations
    keyword_match: KeywordMatch = "word"
    full_text: bool = False
    watch_status: Callable[[], dict[str, str]] | None = None


def served_index(ctx: Context) -> ServedIndex:
    """What the server serves, as a tool call's Context carries it."""
    return ctx.request_context.lifespan_context


def lifespan_of(served: ServedIndex) -> Callable[[MCPServer[ServedIndex]], AbstractAsyncContextManager[ServedIndex]]:
    """The server's lifespan: it yields `served`, as it is, each time the SDK enters it."""

    @asynccontextmanager
    async def serving(_: MCPServer[ServedIndex]) -> AsyncIterator[ServedIndex]:
        yield served

    return serving
