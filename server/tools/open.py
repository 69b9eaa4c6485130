"""open: a window of a document's numbered lines, runs this conversation already has marked with the
calls that sent them instead of sent again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

from arag_mcp.server import search as searching
from arag_mcp.server.output.chunk_results import CONVERSATION_FIELD, with_conversation, with_notice
from arag_mcp.server.output.descriptions import CONVERSATION_NOTE
from arag_mcp.server.output.document_results import ALREADY_HERE, numbered, sent_by
from arag_mcp.server.search.conversations import Origin
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from .argument_types import ConversationHandle, Ref, WholeNumber
from .checks import checked_document
from .results import tool_result
from .tool_spec import ToolSpec

if TYPE_CHECKING:
    from arag_mcp.indexer.index.document_lines import DocumentLines

DESCRIPTION = f"""Open a window of a document's numbered lines, given a ref from search results.

Shows up to 1,800 lines (and about 10,000 tokens) from start_line (default 0), headed "Viewing
lines [a–b] of N lines", every line after its number; the header says where to continue. Lines
are stable: a number seen in find opens the same line. Runs of lines this conversation already
has are marked, with the calls that sent them, instead of sent again. {CONVERSATION_NOTE}"""


class OpenOutput(BaseModel):
    message: str
    conversation: str = CONVERSATION_FIELD
    ref: str
    title: str
    total_lines: int
    first_line: int
    last_line: int
    text: str = Field(
        description="the lines, each after its number; runs this conversation already has are marked with the "
        "calls that sent them"
    )


def open_lines(
    ctx: Context,
    ref: Ref,
    start_line: Annotated[int, Field(ge=0, description="the first line to show (from 0)"), WholeNumber] = 0,
    conversation: ConversationHandle = None,
) -> Annotated[CallToolResult, OpenOutput]:
    served = served_index(ctx)
    document = checked_document(served.live.snapshot(), ref)
    if start_line >= len(document.lines):
        raise ToolError(
            f"start_line {start_line} is past the end: the document has {len(document.lines)} lines "
            f"(0-{len(document.lines) - 1})"
        )
    current = served.conversations.resume(conversation)
    lines = searching.window(document, start_line)
    seen = served.conversations.lines_seen(current, document)
    output = open_output(document, ref.strip(), lines, seen, current.handle, current.notice)
    served.conversations.mark_lines_shown(current, document, lines, Origin(current.calls, "open"))
    return tool_result(output, open_text)


def open_output(
    document: DocumentLines, ref: str, lines: range, seen: Mapping[int, Origin], conversation: str, notice: str
) -> OpenOutput:
    parts: list[str] = []
    run: list[int] = []
    for line in lines:
        if line in seen:
            run.append(line)
            continue
        if run:
            parts.append(_shown_before(run, seen))
            run = []
        parts.append(numbered(document, [line]))
    if run:
        parts.append(_shown_before(run, seen))
    last = lines.stop - 1
    message = (
        f"Viewing lines [{lines.start}–{last}] of {len(document.lines)} lines of {document.title or document.doc_id}."
    )
    if lines.stop < len(document.lines):
        message += f" Continue with start_line={lines.stop}."
    return OpenOutput(
        message=with_notice(notice, message),
        conversation=conversation,
        ref=ref,
        title=document.title,
        total_lines=len(document.lines),
        first_line=lines.start,
        last_line=last,
        text="\n".join(parts),
    )


def _shown_before(run: list[int], seen: Mapping[int, Origin]) -> str:
    return f"[lines {run[0]}–{run[-1]}: {ALREADY_HERE}, sent by {'; '.join(sent_by(seen, run))}]"


def open_text(output: OpenOutput) -> str:
    return with_conversation([output.message, output.text], output.conversation)


TOOL = ToolSpec(
    name="open",
    title="Open document lines",
    function=open_lines,
    description=DESCRIPTION,
    idempotent=False,
)
