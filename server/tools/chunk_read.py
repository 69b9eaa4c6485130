"""chunk_read: chunks whole by id, each sent once per conversation (again: true sends it again)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from arag_mcp.server.output.chunk_results import (
    PAGES_FIELD,
    SECTION_FIELD,
    ToolOutput,
    place_fields,
    place_text,
    with_conversation,
    with_notice,
)
from arag_mcp.server.search.conversations import Origin
from arag_mcp.server.search.limits import MAX_CHUNK_IDS
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from .argument_types import ConversationHandle
from .results import tool_result
from .tool_spec import ToolSpec

if TYPE_CHECKING:
    from arag_mcp.indexer.index.chunks import Chunk
    from arag_mcp.server.search.conversations import Delivery

ChunkIds = Annotated[list[str], Field(description="chunk ids from search results")]
Again = Annotated[
    bool,
    Field(description="send read chunks again"),
]
READ_BEFORE = "This chunk has been read before"

DESCRIPTION = """Read chunks whole by id (up to 20 ids from the search tools), each with its title, section and
the ids of the previous and next chunk (read those when text is cut off at a boundary). A chunk
this conversation already read is not sent again (again: true sends it)."""


class ChunkResult(BaseModel):
    chunk_id: str
    status: Literal["ok", "read_before", "not_found", "not_sent"]
    title: str | None = None
    source: str | None = None
    section: str | None = SECTION_FIELD
    pages: str | None = PAGES_FIELD
    text: str | None = None
    previous_chunk_id: str | None = None
    next_chunk_id: str | None = None


class ChunkReadOutput(ToolOutput):
    chunks: list[ChunkResult]


def chunk_read(
    ctx: Context, chunk_ids: ChunkIds, again: Again = False, conversation: ConversationHandle = None
) -> Annotated[CallToolResult, ChunkReadOutput]:
    served = served_index(ctx)
    wanted = list(dict.fromkeys(cid.strip() for cid in chunk_ids if cid.strip()))
    if not wanted:
        raise ToolError("chunk_ids is empty; pass ids from the search results")
    if len(wanted) > MAX_CHUNK_IDS:
        raise ToolError(
            f"chunk_ids holds {len(wanted)} ids; read at most {MAX_CHUNK_IDS} per call, the most promising first"
        )
    current = served.conversations.resume(conversation)
    found = served.live.snapshot().chunks.by_id(wanted)
    origins = [Origin(current.calls, "chunk_read")] * len(wanted)
    deliveries = served.conversations.deliver(current, wanted, found, origins, again=again)
    return tool_result(chunk_read_output(deliveries, current.handle, current.notice), chunk_read_text)


def chunk_result(delivery: Delivery) -> ChunkResult:
    chunk: Chunk | None = delivery.chunk if delivery.status == "ok" else None
    if chunk is None:
        return ChunkResult(chunk_id=delivery.chunk_id, status=delivery.status)
    return ChunkResult(
        chunk_id=chunk.chunk_id,
        status="ok",
        title=chunk.title,
        source=chunk.source,
        **place_fields(chunk),
        text=chunk.text,
        previous_chunk_id=chunk.previous_chunk_id,
        next_chunk_id=chunk.next_chunk_id,
    )


def chunk_read_output(deliveries: list[Delivery], conversation: str, notice: str) -> ChunkReadOutput:
    not_sent = [d.chunk_id for d in deliveries if d.status == "not_sent"]
    message = f"Not sent (size limit): {not_sent}; call chunk_read again with them." if not_sent else ""
    return ChunkReadOutput(
        message=with_notice(notice, message), conversation=conversation, chunks=[chunk_result(d) for d in deliveries]
    )


def chunk_read_text(output: ChunkReadOutput) -> str:
    lines = [output.message] if output.message else []
    for chunk in output.chunks:
        if chunk.status == "ok":
            neighbours = f"previous: {chunk.previous_chunk_id or 'none'} | next: {chunk.next_chunk_id or 'none'}"
            lines.append(
                f"=== chunk_id: {chunk.chunk_id} | title: {chunk.title} | source: {chunk.source}{place_text(chunk.section, chunk.pages)}"
                f" | {neighbours}"
            )
            lines.append(chunk.text or "")
        elif chunk.status == "read_before":
            lines.append(f"=== chunk_id: {chunk.chunk_id}: {READ_BEFORE}")
        elif chunk.status == "not_found":
            lines.append(f"=== chunk_id: {chunk.chunk_id}: no such chunk in this index (use ids from the search tools)")
        else:
            lines.append(f"=== chunk_id: {chunk.chunk_id}: not sent (size limit); call chunk_read again with it")
    return with_conversation(lines, output.conversation)


TOOL = ToolSpec(
    name="chunk_read",
    title="Read chunks",
    function=chunk_read,
    description=DESCRIPTION,
    idempotent=False,
)
