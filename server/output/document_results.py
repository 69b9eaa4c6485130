"""What the document tools (search, find, open) return: a structured model and the same as text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from arag_mcp.server.search.snippets import Snippet
from pydantic import BaseModel, Field

from .chunk_results import (
    ALREADY_SENT_FIELD,
    ALREADY_SENT_NOTE,
    CONVERSATION_FIELD,
    FILE_TYPE_FIELD,
    METADATA_FIELD,
    PAGES_FIELD,
    SECTION_FIELD,
    SENTENCES_ALREADY_SENT_FIELD,
    SNIPPET_SEPARATOR,
    KeywordCount,
    already_sent_text,
    bounded_metadata,
    chunks_phrase,
    metadata_text,
    omitted_text,
    place_fields,
    place_text,
    with_conversation,
    with_notice,
)

MATCH_LINES_LISTED = 20

if TYPE_CHECKING:
    from arag_mcp.indexer.index.document_lines import DocumentLines
    from arag_mcp.server.search.keywords import KeywordFindings
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
    snippet: str | None = Field(None, description="the sentences that matched (long ones cut to their start)")
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
    text: str = Field(description="the lines, each after its number; runs this conversation already has are marked")


def search_output(
    found: list[MergedHit],
    snippets: list[Snippet],
    queries: list[str],
    findings: KeywordFindings | None,
    conversation: str,
    notice: str,
) -> DocumentSearchOutput:
    results = []
    for merged, snippet in zip(found, snippets):
        chunk = merged.hit.chunk
        keyword_hit = merged.keyword_hit
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
                snippet=None if snippet.nothing_new else SNIPPET_SEPARATOR.join(snippet.sentences),
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
    message = (
        f"{len(results)} results from {searched}, merged. Snippets are partial: use find or open "
        "with a ref to read inside its document."
        + (f" {ALREADY_SENT_NOTE}" if any(r.already_sent or r.sentences_already_sent for r in results) else "")
        if results
        else "The index is empty."
    )
    return DocumentSearchOutput(
        message=with_notice(notice, message), conversation=conversation, keyword_counts=keyword_counts, results=results
    )


def find_output(
    document: DocumentLines,
    ref: str,
    found: list[PatternMatches],
    seen: set[int],
    conversation: str,
    notice: str,
    semantic: bool,
) -> FindOutput:
    patterns = []
    for matches in found:
        passages = []
        for passage in matches.passages:
            shown_before = seen.issuperset(passage.lines)
            passages.append(
                PassageResult(
                    first_line=passage.lines.start,
                    last_line=passage.lines.stop - 1,
                    status="shown_before" if shown_before else "ok",
                    text=None if shown_before else numbered(document, passage.lines),
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
    document: DocumentLines, ref: str, lines: range, seen: set[int], conversation: str, notice: str
) -> OpenOutput:
    parts: list[str] = []
    run: list[int] = []
    for line in lines:
        if line in seen:
            run.append(line)
            continue
        if run:
            parts.append(_shown_before(run))
            run = []
        parts.append(numbered(document, [line]))
    if run:
        parts.append(_shown_before(run))
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


def _shown_before(run: list[int]) -> str:
    return f"[lines {run[0]}–{run[-1]}: already in this conversation]"


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
        lines.append(
            f"[{rank}] ref: {result.ref} | title: {result.title} | file: {result.file_name} ({result.file_type})"
            f"{place_text(result.section, result.pages)}{found_by}"
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
                lines.append(f"--- lines {passage.first_line}–{passage.last_line}: already in this conversation")
            else:
                lines.append(f"--- lines {passage.first_line}–{passage.last_line}")
                lines.append(passage.text or "")
    return with_conversation(lines, output.conversation)


def open_text(output: OpenOutput) -> str:
    return with_conversation([output.message, output.text], output.conversation)


def numbered(document: DocumentLines, lines: Sequence[int]) -> str:
    """The lines, each after its line number: what the model cites and opens at."""
    return "\n".join(f"{line}: {document.lines[line]}" for line in lines)
