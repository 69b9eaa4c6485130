"""What each tool returns: a structured model and the same content as text.

Hosts differ in what they show the model (some only the structured content, some only the
text), so both carry everything: ids, titles, sources, snippets, chunk text and notices.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from .retrieval import SNIPPET_SEPARATOR, Chunk, KeywordHit, SemanticHit

MAX_SNIPPET_CHARS = 1200
READ_BEFORE = "This chunk has been read before"


class KeywordResult(BaseModel):
    chunk_id: str
    title: str
    source: str
    score: int = Field(description="sum over keywords of occurrences x keyword length")
    snippet: str = Field(description="the chunk's sentences that contain a keyword, joined with ' ... '")


class SemanticResult(BaseModel):
    chunk_id: str
    title: str
    source: str
    score: float = Field(description="cosine similarity of the chunk's best sentence to the query")
    sentences: list[str] = Field(description="the chunk's matched sentences, in document order")


class ChunkResult(BaseModel):
    chunk_id: str
    status: Literal["ok", "read_before", "not_found", "not_sent"]
    title: str | None = None
    source: str | None = None
    text: str | None = None
    previous_chunk_id: str | None = None
    next_chunk_id: str | None = None


class SearchOutput(BaseModel):
    message: str
    session: str | None = Field(None, description="pass back as `session` in later calls")


class KeywordSearchOutput(SearchOutput):
    results: list[KeywordResult]


class SemanticSearchOutput(SearchOutput):
    results: list[SemanticResult]


class ChunkReadOutput(SearchOutput):
    chunks: list[ChunkResult]


def bounded_sentences(sentences: list[str], limit: int = MAX_SNIPPET_CHARS) -> list[str]:
    """The leading sentences within `limit` characters (at least one), plus a count of the rest."""
    kept: list[str] = []
    size = 0
    for sentence in sentences:
        if kept and size + len(sentence) > limit:
            kept.append(f"(+{len(sentences) - len(kept)} more matching sentences: read the chunk)")
            break
        kept.append(sentence if len(sentence) <= limit else sentence[:limit] + "…")
        size += len(sentence)
    return kept


def keyword_output(hits: list[KeywordHit], keywords: list[str], session: str | None) -> KeywordSearchOutput:
    results = [
        KeywordResult(
            chunk_id=hit.chunk_id,
            title=hit.title,
            source=hit.source,
            score=hit.score,
            snippet=SNIPPET_SEPARATOR.join(bounded_sentences(hit.snippet)),
        )
        for hit in hits
    ]
    if results:
        message = f"{len(results)} chunks contain {keywords}. Snippets are partial: chunk_read the relevant ids."
    else:
        message = f"No chunk contains any of {keywords}. Try shorter or alternative terms, or semantic_search."
    return KeywordSearchOutput(message=message, session=session, results=results)


def semantic_output(hits: list[SemanticHit], session: str | None) -> SemanticSearchOutput:
    results = [
        SemanticResult(
            chunk_id=hit.chunk_id,
            title=hit.title,
            source=hit.source,
            score=round(hit.score, 4),
            sentences=bounded_sentences(hit.sentences),
        )
        for hit in hits
    ]
    message = (
        f"{len(results)} chunks ranked by their best sentence. Matched sentences are partial: chunk_read the relevant ids."
        if results
        else "The index is empty."
    )
    return SemanticSearchOutput(message=message, session=session, results=results)


def chunk_result(chunk: Chunk) -> ChunkResult:
    return ChunkResult(
        chunk_id=chunk.chunk_id,
        status="ok",
        title=chunk.title,
        source=chunk.source,
        text=chunk.text,
        previous_chunk_id=chunk.previous_chunk_id,
        next_chunk_id=chunk.next_chunk_id,
    )


def keyword_text(output: KeywordSearchOutput) -> str:
    rows = [(r, str(r.score), f"snippet: {r.snippet}") for r in output.results]
    return _search_text(output, rows)


def semantic_text(output: SemanticSearchOutput) -> str:
    rows = [(r, f"{r.score:.4f}", f"matched: {SNIPPET_SEPARATOR.join(r.sentences)}") for r in output.results]
    return _search_text(output, rows)


def _search_text(output: SearchOutput, rows: list[tuple[KeywordResult | SemanticResult, str, str]]) -> str:
    lines = [output.message]
    for rank, (result, score, body) in enumerate(rows, 1):
        lines.append(
            f"[{rank}] chunk_id: {result.chunk_id} | title: {result.title} | source: {result.source} | score: {score}"
        )
        lines.append(f"    {body}")
    return _with_session(lines, output.session)


def chunk_read_text(output: ChunkReadOutput) -> str:
    lines = [output.message] if output.message else []
    for chunk in output.chunks:
        if chunk.status == "ok":
            neighbours = f"previous: {chunk.previous_chunk_id or 'none'} | next: {chunk.next_chunk_id or 'none'}"
            lines.append(
                f"=== chunk_id: {chunk.chunk_id} | title: {chunk.title} | source: {chunk.source} | {neighbours}"
            )
            lines.append(chunk.text or "")
        elif chunk.status == "read_before":
            lines.append(f"=== chunk_id: {chunk.chunk_id}: {READ_BEFORE}")
        elif chunk.status == "not_found":
            lines.append(f"=== chunk_id: {chunk.chunk_id}: no such chunk in this index (use ids from the search tools)")
        else:
            lines.append(f"=== chunk_id: {chunk.chunk_id}: not sent (size limit); call chunk_read again with it")
    return _with_session(lines, output.session)


def _with_session(lines: list[str], session: str | None) -> str:
    if session:
        lines.append(f'session: {session} (pass session="{session}" in later calls)')
    return "\n".join(lines)
