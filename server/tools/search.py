"""search: AgenticRAG's search over documents, several queries' best chunks merged, with the chunks
exact names or terms match joined; each result a ref that find and open take."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any

from arag_mcp.server import search as searching
from arag_mcp.server.output import descriptions
from arag_mcp.server.output.chunk_results import (
    ALREADY_SENT_FIELD,
    ALREADY_SENT_NOTE,
    EXTENT_FIELD,
    FILE_TYPE_FIELD,
    METADATA_FIELD,
    PAGES_FIELD,
    SECTION_FIELD,
    SENTENCES_ALREADY_SENT_FIELD,
    WHOLE_CHUNK_FIELD,
    WHOLE_CHUNK_NOTE,
    KeywordCount,
    ToolOutput,
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
from arag_mcp.server.search.limits import MAX_RESULTS_PER_QUERY, METADATA_FIELDS
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from .argument_types import ConversationHandle, Queries, ScopeConditions, WholeNumber
from .checks import checked_keywords, checked_queries, query_vectors, search_call
from .results import search_result
from .tool_spec import ToolSpec

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordFindings
    from arag_mcp.server.search.retrieval import MergedHit
    from arag_mcp.server.search.snippets import Snippet

PerQuery = Annotated[
    int,
    Field(ge=1, le=MAX_RESULTS_PER_QUERY, description=f"results per query (1-{MAX_RESULTS_PER_QUERY})"),
    WholeNumber,
]
ExactNames = Annotated[
    list[str] | None,
    Field(
        description="optional names, titles or exact terms, looked up literally (by default as whole words, ignoring case and "
        "accents); the chunks they match join the results, with each keyword's count of matching chunks (0: absent)"
    ),
]

DESCRIPTION = f"""Search the document collection by meaning with 1 to 5 queries at once (reformulations or parts
of one information need). Each query is compared with every sentence of the collection; each
query's best chunks (top_k per query, up to 10) are merged, and a passage found by several
queries appears once, with the queries that found it. Names, titles or exact terms given as
keywords are also looked up literally (by default as whole words, ignoring case and accents): the chunks they
match join the results, and the header says how many chunks each matches (0 proves an absence).

Each result has a ref (find and open take it), the document's title, file name and file type
(md, html, pdf, jsonl, ...) and how many lines the document has, its metadata (a JSON/JSONL record's own fields, up to {METADATA_FIELDS}), a score and a snippet:
the whole chunk when it is short, marked (whole chunk), or (whole document) when it is all of its
document; else the sentences that matched (a long one cut to its start), marked (k of n
sentences). When such a partial result looks relevant, look inside its document with find (words
or phrases) or open (a window of numbered lines). {descriptions.ALREADY_SENT_NOTE} {descriptions.CONVERSATION_NOTE}"""


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


class DocumentSearchOutput(ToolOutput):
    keyword_counts: list[KeywordCount] | None = Field(None, description="chunks each keyword matches, in all")
    results: list[DocumentResult]


def search(
    ctx: Context,
    queries: Queries,
    top_k: PerQuery = 5,
    keywords: ExactNames = None,
    scope: ScopeConditions = None,
    conversation: ConversationHandle = None,
) -> Annotated[CallToolResult, DocumentSearchOutput]:
    served = served_index(ctx)
    checked = checked_queries(queries)
    terms = checked_keywords(keywords, served.keyword_match) if keywords else []
    call = search_call(served, scope, conversation)
    vectors = query_vectors(served, call.snapshot, checked)
    found = searching.merged_with_keywords(call, "search", vectors, terms, top_k, served.keyword_match)
    lines = [call.snapshot.documents.line_count(merged.hit.chunk.chunk_id) or 0 for merged in found.merged]
    output = search_output(
        found.merged, found.snippets, lines, checked, found.findings, call.current.handle, call.current.notice
    )
    return search_result(call, output, search_text)


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


TOOL = ToolSpec(
    name="search",
    title="Search",
    function=search,
    description=DESCRIPTION,
    searches=True,
)
