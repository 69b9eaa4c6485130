"""What a search sends a conversation of each hit: its whole chunk, or a snippet of what the
conversation was not sent of it, each recorded as sent by this call's result (conversations.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .conversations import Delivery, Origin
from .snippets import Excerpt, Snippet, chunk_excerpt, snippet

if TYPE_CHECKING:
    from arag_mcp.indexer.index.ranked import Hit

    from .search_calls import SearchCall


def deliveries(call: SearchCall, tool: str, hits: list[Hit]) -> list[Delivery]:
    """The hits' whole chunks for the conversation, read-before and size bound applied."""
    wanted = [hit.chunk.chunk_id for hit in hits]
    origins = [Origin(call.current.calls, tool, rank) for rank in range(1, len(hits) + 1)]
    return call.conversations.deliver(call.current, wanted, call.chunks_of(hits), origins)


def sent_snippets(
    call: SearchCall, tool: str, hits: list[Hit], cuts: list[Callable[[str], str]], whole_chunks: bool
) -> list[Snippet]:
    """What each hit shows of its chunk (snippets.chunk_excerpt, each long sentence shortened by its
    `cuts`): where the results carry whole chunks, their matched sentences (the chunk text is what
    is tracked); else what this conversation was not sent."""
    if whole_chunks:
        return [
            snippet(Excerpt([cut(s) for s in hit.matched], False, hit.chunk.sentence_count), set())
            for hit, cut in zip(hits, cuts)
        ]
    chunks = call.chunks_of(hits)
    return [
        call.conversations.send_snippet(
            call.current,
            hit.chunk.chunk_id,
            chunk_excerpt(chunks[hit.chunk.chunk_id], hit.matched, cut),
            Origin(call.current.calls, tool, rank),
        )
        for rank, (hit, cut) in enumerate(zip(hits, cuts), 1)
    ]
