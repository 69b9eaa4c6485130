"""find: words or phrases inside one document (or, by meaning, its sentences nearest them), each
match's passage of numbered lines sent once per conversation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Literal

from arag_mcp.server import search as searching
from arag_mcp.server.output.chunk_results import CONVERSATION_FIELD, with_conversation, with_notice
from arag_mcp.server.output.descriptions import CONVERSATION_NOTE
from arag_mcp.server.output.document_results import ALREADY_HERE, numbered, sent_by
from arag_mcp.server.search.conversations import Origin
from arag_mcp.server.search.limits import MAX_FIND_PATTERN_CHARS, MAX_FIND_PATTERNS, quoted
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from .argument_types import ConversationHandle, Ref
from .checks import checked_document, checked_query, query_vectors
from .results import tool_result
from .tool_spec import ToolSpec

if TYPE_CHECKING:
    from arag_mcp.indexer.index.document_lines import DocumentLines
    from arag_mcp.server.search.within_document import PatternMatches

Patterns = Annotated[
    list[str], Field(description=f"1-{MAX_FIND_PATTERNS} words or phrases to look for in the document")
]
MATCH_LINES_LISTED = 20

DESCRIPTION = f"""Find words or phrases inside one document, given a ref from search results.

Each pattern is matched case-insensitively as a substring of the document's lines (or, with
semantic=true, by meaning: the document's sentences nearest the pattern). For each pattern you
get how many lines match, the first matching line numbers, and up to 2 passages (the matching line
with 2 lines either side; passages that overlap or touch are one), every line after its number; a
passage already given for an earlier pattern is not repeated, and one this conversation already has
is marked, with the calls that sent it, instead of sent again. Open a
line number to read around it. Up to 10 patterns per call. {CONVERSATION_NOTE}"""


class PassageResult(BaseModel):
    first_line: int
    last_line: int
    status: Literal["ok", "shown_before"]
    text: str | None = Field(None, description="the lines, each after its number")
    sent_by: list[str] | None = Field(
        None, description="which earlier calls of this conversation sent these lines (shown_before)"
    )


class PatternResult(BaseModel):
    pattern: str
    matches: int = Field(description="how many lines match (substring) or sentences were compared (semantic)")
    match_lines: list[int] = Field(description=f"the first {MATCH_LINES_LISTED} matching lines, best first")
    passages: list[PassageResult]


class FindOutput(BaseModel):
    message: str
    conversation: str = CONVERSATION_FIELD
    ref: str
    title: str
    total_lines: int
    patterns: list[PatternResult]


def find(
    ctx: Context,
    ref: Ref,
    patterns: Patterns,
    semantic: Annotated[bool, Field(description="match by meaning (nearest sentences) instead of by text")] = False,
    conversation: ConversationHandle = None,
) -> Annotated[CallToolResult, FindOutput]:
    served = served_index(ctx)
    wanted = _checked_patterns(patterns)
    snapshot = served.live.snapshot()
    document = checked_document(snapshot, ref)
    current = served.conversations.resume(conversation)
    if semantic:
        vectors = query_vectors(served, snapshot, [checked_query(p) for p in wanted])
        found = searching.find_semantic(document, wanted, vectors, snapshot.sentences.of_document(document))
    else:
        found = searching.find(document, wanted)
    seen = served.conversations.lines_seen(current, document)
    output = find_output(document, ref.strip(), found, seen, current.handle, current.notice, semantic)
    sent = [line for p in found for passage in p.passages for line in passage.lines]
    served.conversations.mark_lines_shown(current, document, sent, Origin(current.calls, "find"))
    return tool_result(output, find_text)


def _checked_patterns(patterns: list[str]) -> list[str]:
    wanted = list(dict.fromkeys(p.strip() for p in patterns if p.strip()))
    if not wanted:
        raise ToolError('patterns is empty; give words or phrases to look for, e.g. ["Nobel Prize"]')
    if len(wanted) > MAX_FIND_PATTERNS:
        raise ToolError(f"{len(wanted)} patterns given; pass at most {MAX_FIND_PATTERNS}")
    long = next((pattern for pattern in wanted if len(pattern) > MAX_FIND_PATTERN_CHARS), None)
    if long:
        raise ToolError(
            f"patterns are words or phrases; got one of {len(long)} characters ({quoted(long)}); "
            f"keep each to at most {MAX_FIND_PATTERN_CHARS}"
        )
    return wanted


def find_output(
    document: DocumentLines,
    ref: str,
    found: list[PatternMatches],
    seen: Mapping[int, Origin],
    conversation: str,
    notice: str,
    semantic: bool,
) -> FindOutput:
    patterns = []
    for matches in found:
        passages = []
        for passage in matches.passages:
            shown_before = all(line in seen for line in passage.lines)
            passages.append(
                PassageResult(
                    first_line=passage.lines.start,
                    last_line=passage.lines.stop - 1,
                    status="shown_before" if shown_before else "ok",
                    text=None if shown_before else numbered(document, passage.lines),
                    sent_by=sent_by(seen, passage.lines) if shown_before else None,
                )
            )
        patterns.append(
            PatternResult(
                pattern=matches.pattern,
                matches=len(matches.lines),
                match_lines=matches.lines[:MATCH_LINES_LISTED],
                passages=passages,
            )
        )
    how = "nearest sentences (semantic)" if semantic else "case-insensitive substring"
    message = f"{document.title or document.doc_id}: {len(document.lines)} lines, matched by {how}."
    return FindOutput(
        message=with_notice(notice, message),
        conversation=conversation,
        ref=ref,
        title=document.title,
        total_lines=len(document.lines),
        patterns=patterns,
    )


def find_text(output: FindOutput) -> str:
    lines = [output.message]
    for pattern in output.patterns:
        if not pattern.matches:
            lines.append(f"pattern {pattern.pattern!r}: no match")
            continue
        listed = ", ".join(map(str, pattern.match_lines))
        more = " …" if pattern.matches > len(pattern.match_lines) else ""
        lines.append(f"pattern {pattern.pattern!r}: {pattern.matches} matches (lines {listed}{more})")
        for passage in pattern.passages:
            if passage.status == "shown_before":
                lines.append(
                    f"--- lines {passage.first_line}–{passage.last_line}: {ALREADY_HERE}, "
                    f"sent by {'; '.join(passage.sent_by or [])}"
                )
            else:
                lines.append(f"--- lines {passage.first_line}–{passage.last_line}")
                lines.append(passage.text or "")
    return with_conversation(lines, output.conversation)


TOOL = ToolSpec(
    name="find",
    title="Find in a document",
    function=find,
    description=DESCRIPTION,
    idempotent=False,
)
