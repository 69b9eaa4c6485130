"""The tool functions every profile draws from, bound to one served index and its conversations.

Each public method is one MCP tool: its signature is the tool's input schema, its return
annotation the output schema. Profiles (profiles.py) choose which ones a server offers, under
which description, and whether searches return whole chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from arag_mcp.indexer.manifest import IndexStoreError
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from . import retrieval
from .conversations import Conversation, Conversations, Delivery
from .limits import MAX_CHUNK_IDS, MAX_KEYWORD_WORDS, MAX_KEYWORDS, MAX_QUERY_CHARS, MAX_TOP_K, MODEL_WAIT_SECONDS
from .live_index import LiveIndex, ModelNotReady
from .results import (
    ChunkReadOutput,
    KeywordSearchOutput,
    SemanticSearchOutput,
    chunk_read_output,
    chunk_read_text,
    keyword_output,
    keyword_text,
    semantic_output,
    semantic_text,
)

if TYPE_CHECKING:
    from arag_mcp.indexer.reader import IndexSnapshot

TopK = Annotated[int, Field(ge=1, le=MAX_TOP_K, description=f"number of chunks to return (1-{MAX_TOP_K})")]
Session = Annotated[
    str | None, Field(description="the `session` handle of this conversation's earlier results; omit it at the start")
]
Keywords = Annotated[list[str], Field(description="short specific terms, matched literally and case-insensitively")]
Query = Annotated[str, Field(description="a question or description of what to find")]
ChunkIds = Annotated[list[str], Field(description="chunk ids from the search results")]


class Toolkit:
    """The tools over `live`; with `full_text`, searches send whole chunks (the paper's w/o chunk read)."""

    def __init__(self, live: LiveIndex, conversations: Conversations, full_text: bool = False) -> None:
        self.live = live
        self.conversations = conversations
        self.full_text = full_text

    def keyword_search(
        self, keywords: Keywords, top_k: TopK = 5, session: Session = None
    ) -> Annotated[CallToolResult, KeywordSearchOutput]:
        terms = [k.strip() for k in keywords if k.strip()]
        if not terms:
            raise ToolError('keywords is empty; give one or more short terms, e.g. ["Marie Curie"]')
        if len(terms) > MAX_KEYWORDS:
            raise ToolError(f"{len(terms)} keywords given; pass at most {MAX_KEYWORDS}, the most specific first")
        wordy = [k for k in terms if len(k.split()) > MAX_KEYWORD_WORDS]
        if wordy:
            raise ToolError(
                f"keywords must be short terms; got a {len(wordy[0].split())}-word sentence "
                f"({wordy[0][:40]!r}...); split it into names and terms, or use a semantic search"
            )
        conversation = self.conversations.resume(session)
        hits = retrieval.keyword_search(self._snapshot(), terms, top_k)
        output = keyword_output(
            hits, terms, conversation.handle, conversation.notice, self._deliver(conversation, hits)
        )
        return _result(output, keyword_text)

    def semantic_search(
        self, query: Query, top_k: TopK = 5, session: Session = None
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        query = _checked_query(query)
        conversation = self.conversations.resume(session)
        snapshot = self._snapshot()
        hits = retrieval.semantic_search(snapshot, self._query_vector(snapshot, query), top_k)
        deliveries = self._deliver(conversation, hits)
        output = semantic_output(hits, conversation.handle, conversation.notice, deliveries, "their best sentence")
        return _result(output, semantic_text)

    def naive_embedding_search(
        self, query: Query, top_k: TopK = 5, session: Session = None
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        query = _checked_query(query)
        conversation = self.conversations.resume(session)
        snapshot = self._snapshot()
        try:
            hits = retrieval.naive_search(snapshot, self._query_vector(snapshot, query), top_k)
        except IndexStoreError as exc:
            raise ToolError(str(exc)) from None
        deliveries = self._deliver(conversation, hits, always=True)
        output = semantic_output(hits, conversation.handle, conversation.notice, deliveries, "their chunk vector")
        return _result(output, semantic_text)

    def chunk_read(self, chunk_ids: ChunkIds, session: Session = None) -> Annotated[CallToolResult, ChunkReadOutput]:
        wanted = list(dict.fromkeys(cid.strip() for cid in chunk_ids if cid.strip()))
        if not wanted:
            raise ToolError("chunk_ids is empty; pass ids from the search results")
        if len(wanted) > MAX_CHUNK_IDS:
            raise ToolError(
                f"chunk_ids holds {len(wanted)} ids; read at most {MAX_CHUNK_IDS} per call, the most promising first"
            )
        conversation = self.conversations.resume(session)
        found = self._snapshot().chunks(wanted)
        deliveries = self.conversations.deliver(conversation, wanted, found)
        return _result(chunk_read_output(deliveries, conversation.handle, conversation.notice), chunk_read_text)

    def _deliver(
        self, conversation: Conversation, hits: list[retrieval.Hit], always: bool = False
    ) -> list[Delivery] | None:
        """Whole chunks for the conversation (read-before and size bound applied), where this tool sends them."""
        if not (self.full_text or always):
            return None
        return self.conversations.deliver(
            conversation, [hit.chunk.chunk_id for hit in hits], {hit.chunk.chunk_id: hit.chunk for hit in hits}
        )

    def _snapshot(self) -> IndexSnapshot:
        try:
            return self.live.snapshot()
        except IndexStoreError as exc:
            raise ToolError(str(exc)) from None

    def _query_vector(self, snapshot: IndexSnapshot, query: str) -> Any:
        try:
            return self.live.query_vector(snapshot, query, MODEL_WAIT_SECONDS)
        except ModelNotReady as exc:
            raise ToolError(str(exc)) from None


def _checked_query(query: str) -> str:
    query = query.strip()
    if not query:
        raise ToolError('query is empty; describe what to find, e.g. "where was Marie Curie born"')
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError(
            f"query has {len(query)} characters; keep it under {MAX_QUERY_CHARS} (one sub-question at a time)"
        )
    return query


def _result(output: BaseModel, render: Callable[[Any], str]) -> CallToolResult:
    """Text and structured content, each complete on its own (hosts show one or the other)."""
    return CallToolResult(
        content=[TextContent(type="text", text=render(output))], structured_content=output.model_dump(exclude_none=True)
    )
