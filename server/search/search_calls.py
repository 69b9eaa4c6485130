"""One search tool call: the build, scope and conversation it works within, and the chunks its hits name."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from arag_mcp.indexer.index.chunks import Chunk

from .scope import in_scope

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.indexer.index.ranked import Hit
    from arag_mcp.indexer.index.snapshot import IndexSnapshot

    from .conversations import Conversation, Conversations


@dataclass(frozen=True)
class SearchCall:
    """What one search tool call works within: the served build, the chunks its scope admits (None:
    the whole index), the conversations and the one this call belongs to."""

    snapshot: IndexSnapshot
    scope: dict[str, Any] | None
    mask: np.ndarray | None
    conversations: Conversations
    current: Conversation

    @classmethod
    def within(
        cls, snapshot: IndexSnapshot, scope: dict[str, Any] | None, conversations: Conversations, handle: str | None
    ) -> SearchCall:
        """A call within `scope` (a ScopeError where it cannot match: scope.py, before the conversation
        `handle` names is resumed, or a new one begun)."""
        mask = in_scope(snapshot, scope)
        return cls(snapshot, scope, mask, conversations, conversations.resume(handle))

    def chunks_of(self, hits: list[Hit]) -> dict[str, Chunk]:
        """The hits' chunks with their texts, by id: read where a hit names its chunk by header alone."""
        found = {hit.chunk.chunk_id: hit.chunk for hit in hits if isinstance(hit.chunk, Chunk)}
        found.update(
            self.snapshot.chunks.by_id([hit.chunk.chunk_id for hit in hits if hit.chunk.chunk_id not in found])
        )
        return found

    def with_texts(self, hits: list[Hit]) -> list[Hit]:
        """The hits with their chunks' texts, read once for all that later look at them."""
        chunks = self.chunks_of(hits)
        return [replace(hit, chunk=chunks[hit.chunk.chunk_id]) for hit in hits]
