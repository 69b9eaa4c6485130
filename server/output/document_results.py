"""What the document tools (search, find, open) return: a structured model and the same as text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from arag_mcp.server.search.snippets import Snippet
from pydantic import BaseModel, Field

from .chunk_results import (
    ALREADY_SENT_FIELD,
    ALREADY_SENT_NOTE,
    CONVERSATION_FIELD,
    EXTENT_FIELD,
    FILE_TYPE_FIELD,
    METADATA_FIELD,
    PAGES_FIELD,
    SECTION_FIELD,
    SENTENCES_ALREADY_SENT_FIELD,
    WHOLE_CHUNK_FIELD,
    WHOLE_CHUNK_NOTE,
    KeywordCount,
    already_sent_text,
    bounded_metadata,
    chunks_phrase,
    metadata_text,
    omitted_text,
    place_fields,
    place_text,
    snippet_text,
    with_conversation,
    with_notice,
)

MATCH_LINES_LISTED = 20
ALREADY_HERE = "already in this conversation"

if TYPE_CHECKING:
    from arag_mcp.indexer.index.document_lines import DocumentLines
    from arag_mcp.indexer.index.keywords import KeywordFindings
    from arag_mcp.server.search.conversations import Origin
    from arag_mcp.server.search.retrieval import MergedHit
    from arag_mcp.server.search.within_document import PatternMatches


class DocumentResult(BaseModel):
    ref: str = Field(description="the chunk's id; find and open take it (or the document part before '-')")
    title: str
    file_name: str
    file_type: str = FILE_TYPE_FIELD
    section: str | None = SECTION_FIELD
    pages: str | None = PAGES_FIELD
    metadata: dict[str, Any] | None = METADATA_FIELD
    score: float | None = Field(
        None, description="cosine similarity of the chunk's best sentence to the best matching query"
    )
    queries: list[int] = Field(description="which queries (from 0) found this chunk (none: only keywords did)")
    keywords: list[str] | None = Field(None, description="the keywords this chunk matched")
    keyword_score: float | int | None = Field(
        None,
        description="its score for the keywords: their matches weighted by rarity (BM25), or the paper's occurrences x length under --keyword-match substring",
    )
    document_lines: int = Field(description="how many lines its document has (open and find number them from 0)")
    snippet: str | None = Field(
        None,
        description="the whole chunk when it is short, else the sentences that matched (long ones cut to their "
        "start, each after the sentence before where it opens with a pronoun)",
    )
    whole_chunk: bool | None = WHOLE_CHUNK_FIELD
    whole_document: bool | None = Field(
        None, description="true when the snippet is the whole document: find and open add nothing"
    )
    extent: str | None = EXTENT_FIELD
    already_sent: bool | None = ALREADY_SENT_FIELD
    sentences_already_sent: int | None = SENTENCES_ALREADY_SENT_FIELD


class DocumentSearchOutput(BaseModel):
    message: str
    conversation: str = CONVERSATION_FIELD
    keyword_counts: list[KeywordCount] | None = Field(None, description="chunks each keyword matches, in all")
    results: list[DocumentResult]


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


def search_output(
    found: list[MergedHit],
    snippets: list[Snippet],
    document_lines: list[int],
    queries: list[str],
    findings: KeywordFindings | None,
    conversation: str,
    notice: str,
) -> DocumentSearchOutput:
    results = []
    for merged, snippet, lines in zip(found, snippets, document_lines):
        chunk = merged.hit.chunk
        keyword_hit = merged.keyword_hit
        whole = snippet.whole and not snippet.nothing_new
        results.append(
            DocumentResult(
                ref=chunk.chunk_id,
                title=chunk.title,
                file_name=PurePosixPath(chunk.source).name,
                file_type=chunk.file_type,
                **place_fields(chunk),
                metadata=bounded_metadata(chunk.metadata) or None,
                score=round(merged.hit.score, 4) if merged.queries else None,
                queries=merged.queries,
                keywords=list(keyword_hit.keywords) if keyword_hit else None,
                keyword_score=round(keyword_hit.score, 2) if keyword_hit else None,
                document_lines=lines,
                snippet=None if snippet.nothing_new else snippet_text(snippet, whole),
                whole_chunk=whole or None,
                whole_document=(whole and chunk.parts == 1) or None,
                extent=None if snippet.nothing_new else snippet.extent,
                already_sent=snippet.nothing_new or None,
                sentences_already_sent=(0 if snippet.nothing_new else snippet.already_sent) or None,
            )
        )
    plural = "query" if len(queries) == 1 else "queries"
    keyword_counts = None
    searched = f"{len(queries)} {plural}"
    if findings is not None:
        keyword_counts = [
            KeywordCount(keyword=k, chunks=c.at_least, chunks_up_to=None if c.exact else c.at_most)
            for k, c in zip(findings.keywords, findings.per_keyword)
        ]
        counts = "; ".join(f"{k!r}: {chunks_phrase(c)}" for k, c in zip(findings.keywords, findings.per_keyword))
        searched += f" and keywords ({counts})"
    notes = [f"{len(results)} results from {searched}, merged."]
    if any(r.extent for r in results):
        notes.append("A snippet marked 'k of n sentences' is partial: use find or open with its ref to read on.")
    if any(r.whole_chunk for r in results):
        notes.append(WHOLE_CHUNK_NOTE + " One marked (whole document) is all of its document: no need to open it.")
    if any(r.already_sent or r.sentences_already_sent for r in results):
        notes.append(ALREADY_SENT_NOTE)
    message = " ".join(notes) if results else "The index is empty."
    return DocumentSearchOutput(
        message=with_notice(notice, message), conversation=conversation, keyword_counts=keyword_counts, results=results
    )


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


def sent_by(seen: Mapping[int, Origin], lines: Sequence[int]) -> list[str]:
    """The calls that sent `lines`, in the order they were made."""
    return [str(origin) for origin in sorted({seen[line] for line in lines}, key=lambda origin: origin.call)]


def search_text(output: DocumentSearchOutput) -> str:
    lines = [output.message]
    for rank, result in enumerate(output.results, 1):
        if result.already_sent:
            lines.append(already_sent_text(rank, result.ref, result.title))
            continue
        found_by = f" | score: {result.score:.4f} | queries: {result.queries}" if result.queries else ""
        if result.keywords:
            matched = ", ".join(repr(k) for k in result.keywords)
            found_by += f" | keywords: {matched} (score {result.keyword_score})"
        lines_of = f"{result.document_lines} {'line' if result.document_lines == 1 else 'lines'}"
        shows = (
            " (whole document)"
            if result.whole_document
            else " (whole chunk)"
            if result.whole_chunk
            else f" ({result.extent})"
            if result.extent
            else ""
        )
        lines.append(
            f"[{rank}] ref: {result.ref} | title: {result.title} | file: {result.file_name} ({result.file_type}, "
            f"{lines_of}){place_text(result.section, result.pages)}{found_by}{shows}"
        )
        if result.metadata:
            lines.append(f"    metadata: {metadata_text(result.metadata)}")
        lines.append(f"    {result.snippet}{omitted_text(result.sentences_already_sent)}")
    return with_conversation(lines, output.conversation)


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


def open_text(output: OpenOutput) -> str:
    return with_conversation([output.message, output.text], output.conversation)


def numbered(document: DocumentLines, lines: Sequence[int]) -> str:
    """The lines, each after its line number: what the model cites and opens at."""
    return "\n".join(f"{line}: {document.lines[line]}" for line in lines)
