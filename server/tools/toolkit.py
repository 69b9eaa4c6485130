"""The tool functions every profile draws from, bound to one served index and its conversations.

Each public method is one MCP tool: its signature is the tool's input schema, its return
annotation the output schema. The search functions are imported by the calls that use them: they
load NumPy and Arrow, which a server need not load before it answers the handshake. Profiles (profiles.py) choose which ones a server offers, under
which description, and whether searches return whole chunks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from arag_mcp.indexer.index.keywords import words_of
from arag_mcp.indexer.index.schema import ChunkColumn
from arag_mcp.server.output.chunk_results import (
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
from arag_mcp.server.output.document_results import (
    DocumentSearchOutput,
    FindOutput,
    OpenOutput,
    find_output,
    find_text,
    open_output,
    open_text,
    search_output,
    search_text,
)
from arag_mcp.server.search.conversations import Conversations, Origin
from arag_mcp.server.search.limits import (
    MAX_CHUNK_IDS,
    MAX_FIND_PATTERN_CHARS,
    MAX_FIND_PATTERNS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORD_PIECES,
    MAX_KEYWORD_WORDS,
    MAX_KEYWORDS,
    MAX_OFFSET,
    MAX_QUERIES,
    MAX_QUERY_CHARS,
    MAX_RESULTS_PER_QUERY,
    MAX_TOP_K,
    MODEL_WAIT_SECONDS,
    quoted,
)
from arag_mcp.server.search.live_index import LiveIndex, ModelNotReady
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, BeforeValidator, Field

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.indexer.index.document_lines import DocumentLines
    from arag_mcp.indexer.index.keywords import KeywordMatch
    from arag_mcp.indexer.index.snapshot import IndexSnapshot
    from arag_mcp.server.search.search_calls import SearchCall


def _not_a_boolean(value: Any) -> Any:
    """pydantic reads true as 1 where a number is asked; a count or a line number is never true or false."""
    if isinstance(value, bool):
        raise ValueError("a whole number, not true or false")
    return value


WholeNumber = BeforeValidator(_not_a_boolean)
"""Placed after the Field: before it, pydantic leaves the bounds out of the JSON schema."""
TopK = Annotated[int, Field(ge=1, le=MAX_TOP_K, description="chunks to return"), WholeNumber]
Offset = Annotated[
    int,
    Field(
        ge=0,
        le=MAX_OFFSET,
        description="skip this many results",
    ),
    WholeNumber,
]
Again = Annotated[
    bool,
    Field(description="send read chunks again"),
]
Forms = Annotated[bool, Field(description="also match other word forms (charter: chartered)")]
ConversationHandle = Annotated[
    str | None,
    Field(description="the `conversation` handle of earlier results; omit it at the start"),
]
Keywords = Annotated[list[str], Field(description="names, titles, numbers, exact terms")]
Query = Annotated[str, Field(description="one question or description")]
ChunkIds = Annotated[list[str], Field(description="chunk ids from search results")]
Queries = Annotated[
    list[str],
    Field(description=f"1-{MAX_QUERIES} queries: reformulations of one need, or its parts; results are merged"),
]
PerQuery = Annotated[
    int,
    Field(ge=1, le=MAX_RESULTS_PER_QUERY, description=f"results per query (1-{MAX_RESULTS_PER_QUERY})"),
    WholeNumber,
]
ScopeConditions = Annotated[
    dict[str, Any] | None,
    Field(
        description='{"title": "Marie Curie"} searches one page; also document, source ("docs/*.md"), '
        "file_type or a metadata field, all holding"
    ),
]
ExactNames = Annotated[
    list[str] | None,
    Field(
        description="optional names, titles or exact terms, looked up literally (by default as whole words, ignoring case and "
        "accents); the chunks they match join the results, with each keyword's count of matching chunks (0: absent)"
    ),
]
Ref = Annotated[str, Field(description="a ref from search results (a chunk id, or the document part before '-')")]
Patterns = Annotated[
    list[str], Field(description=f"1-{MAX_FIND_PATTERNS} words or phrases to look for in the document")
]


INDEX_WIDE = (ChunkColumn.SOURCE, ChunkColumn.FILE_TYPE)
"""Result fields not repeated in a search's text where every chunk of the index shares them."""
OutputWithMessage = TypeVar("OutputWithMessage", KeywordSearchOutput, SemanticSearchOutput, DocumentSearchOutput)


class Toolkit:
    """The tools over `live`; with `full_text`, searches send whole chunks (the paper's w/o chunk read);
    `keyword_match` chooses what a keyword match is (the keyword engine: arag_mcp.indexer.index.keywords)."""

    def __init__(
        self,
        live: LiveIndex,
        conversations: Conversations,
        full_text: bool = False,
        keyword_match: KeywordMatch = "word",
    ) -> None:
        self.live = live
        self.conversations = conversations
        self.full_text = full_text
        self.keyword_match = keyword_match

    def keyword_search(
        self,
        keywords: Keywords,
        top_k: TopK = 5,
        scope: ScopeConditions = None,
        offset: Offset = 0,
        forms: Forms = False,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, KeywordSearchOutput]:
        from arag_mcp.server.search.keyword_results import keyword_results

        terms = self._checked_keywords(keywords)
        call = self._search_call(scope, conversation)
        found = keyword_results(call, "keyword_search", terms, top_k, offset, forms, self.keyword_match, self.full_text)
        output = keyword_output(
            found.findings,
            call.current.handle,
            call.current.notice,
            found.deliveries,
            found.snippets,
            found.other_words,
            found.same_text,
        )
        return _search_result(call, output, keyword_text)

    def semantic_search(
        self,
        query: Query,
        top_k: TopK = 5,
        scope: ScopeConditions = None,
        offset: Offset = 0,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        from arag_mcp.server.search.retrieval import semantic_search

        return self._vector_search(
            semantic_search, "semantic_search", False, "their best sentence", query, top_k, scope, offset, conversation
        )

    def naive_embedding_search(
        self,
        query: Query,
        top_k: TopK = 5,
        scope: ScopeConditions = None,
        offset: Offset = 0,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        from arag_mcp.server.search.retrieval import naive_search

        return self._vector_search(
            naive_search,
            "naive_embedding_search",
            True,
            "their chunk vector",
            query,
            top_k,
            scope,
            offset,
            conversation,
        )

    def semantic_search_queries(
        self, queries: Queries, top_k: TopK = 5, scope: ScopeConditions = None, conversation: ConversationHandle = None
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        from arag_mcp.server.search.merged_results import merged_results

        checked = _checked_queries(queries)
        call = self._search_call(scope, conversation)
        found = merged_results(call, "semantic_search", self._query_vectors(call.snapshot, checked), top_k)
        hits = [merged.hit for merged in found.merged]
        ranked_by = f"their best sentence over {len(checked)} {'query' if len(checked) == 1 else 'queries'}"
        output = semantic_output(hits, call.current.handle, call.current.notice, None, found.snippets, ranked_by)
        for result, merged in zip(output.results, found.merged):
            result.queries = merged.queries
        return _search_result(call, output, semantic_text)

    def search(
        self,
        queries: Queries,
        top_k: PerQuery = 5,
        keywords: ExactNames = None,
        scope: ScopeConditions = None,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, DocumentSearchOutput]:
        from arag_mcp.server.search.merged_results import merged_with_keywords

        checked = _checked_queries(queries)
        terms = self._checked_keywords(keywords) if keywords else []
        call = self._search_call(scope, conversation)
        vectors = self._query_vectors(call.snapshot, checked)
        found = merged_with_keywords(call, "search", vectors, terms, top_k, self.keyword_match)
        lines = [call.snapshot.documents.line_count(merged.hit.chunk.chunk_id) or 0 for merged in found.merged]
        output = search_output(
            found.merged, found.snippets, lines, checked, found.findings, call.current.handle, call.current.notice
        )
        return _search_result(call, output, search_text)

    def find(
        self,
        ref: Ref,
        patterns: Patterns,
        semantic: Annotated[bool, Field(description="match by meaning (nearest sentences) instead of by text")] = False,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, FindOutput]:
        from arag_mcp.server.search import within_document

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
        snapshot = self._snapshot()
        document = _document(snapshot, ref)
        current = self.conversations.resume(conversation)
        if semantic:
            vectors = self._query_vectors(snapshot, [_checked_query(p) for p in wanted])
            found = within_document.find_semantic(document, wanted, vectors, snapshot.sentences.of_document(document))
        else:
            found = within_document.find(document, wanted)
        seen = self.conversations.lines_seen(current, document)
        output = find_output(document, ref.strip(), found, seen, current.handle, current.notice, semantic)
        sent = [line for p in found for passage in p.passages for line in passage.lines]
        self.conversations.mark_lines_shown(current, document, sent, Origin(current.calls, "find"))
        return _result(output, find_text)

    def open(
        self,
        ref: Ref,
        start_line: Annotated[int, Field(ge=0, description="the first line to show (from 0)"), WholeNumber] = 0,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, OpenOutput]:
        from arag_mcp.server.search.within_document import window

        document = _document(self._snapshot(), ref)
        if start_line >= len(document.lines):
            raise ToolError(
                f"start_line {start_line} is past the end: the document has {len(document.lines)} lines "
                f"(0-{len(document.lines) - 1})"
            )
        current = self.conversations.resume(conversation)
        lines = window(document, start_line)
        seen = self.conversations.lines_seen(current, document)
        output = open_output(document, ref.strip(), lines, seen, current.handle, current.notice)
        self.conversations.mark_lines_shown(current, document, lines, Origin(current.calls, "open"))
        return _result(output, open_text)

    def chunk_read(
        self, chunk_ids: ChunkIds, again: Again = False, conversation: ConversationHandle = None
    ) -> Annotated[CallToolResult, ChunkReadOutput]:
        wanted = list(dict.fromkeys(cid.strip() for cid in chunk_ids if cid.strip()))
        if not wanted:
            raise ToolError("chunk_ids is empty; pass ids from the search results")
        if len(wanted) > MAX_CHUNK_IDS:
            raise ToolError(
                f"chunk_ids holds {len(wanted)} ids; read at most {MAX_CHUNK_IDS} per call, the most promising first"
            )
        current = self.conversations.resume(conversation)
        found = self._snapshot().chunks.by_id(wanted)
        origins = [Origin(current.calls, "chunk_read")] * len(wanted)
        deliveries = self.conversations.deliver(current, wanted, found, origins, again=again)
        return _result(chunk_read_output(deliveries, current.handle, current.notice), chunk_read_text)

    def _vector_search(
        self,
        ranking: Callable[..., Any],
        tool: str,
        whole_chunks: bool,
        ranked_by: str,
        query: str,
        top_k: int,
        scope: dict[str, Any] | None,
        offset: int,
        conversation: str | None,
    ) -> CallToolResult:
        """One query's vector ranked by `ranking` (best sentence, or chunk vector), sent as snippets
        or as whole chunks (vector_results.py)."""
        from arag_mcp.server.search.vector_results import vector_results

        query = _checked_query(query)
        call = self._search_call(scope, conversation)
        vector = self._query_vectors(call.snapshot, [query])[0]
        found = vector_results(call, tool, ranking, vector, top_k, offset, whole_chunks, self.full_text)
        page = found.page
        output = semantic_output(
            page.hits,
            call.current.handle,
            call.current.notice,
            found.deliveries,
            found.snippets,
            ranked_by,
            page.passed_over,
            page.next_offset,
            page.same_text,
        )
        return _search_result(call, output, semantic_text)

    def _checked_keywords(self, keywords: list[str]) -> list[str]:
        terms = [k.strip() for k in keywords if k.strip()]
        if not terms:
            raise ToolError('keywords is empty; give one or more short terms, e.g. ["Marie Curie"]')
        if len(terms) > MAX_KEYWORDS:
            raise ToolError(f"{len(terms)} keywords given; pass at most {MAX_KEYWORDS}, the most specific first")
        _check_keyword_sizes(terms)
        if self.keyword_match == "word":
            from arag_mcp.indexer.index.keywords import wordless

            unmatchable = wordless(terms)
            if unmatchable:
                raise ToolError(
                    f"keyword {quoted(unmatchable[0])} has no letter or digit; keywords match whole words, "
                    "so give names, terms or numbers"
                )
        return terms

    def _search_call(self, scope: dict[str, Any] | None, conversation: str | None) -> SearchCall:
        """The served build, the scope's chunks (a bad scope is a tool error) and the resumed conversation."""
        from arag_mcp.server.search.scope import ScopeError
        from arag_mcp.server.search.search_calls import SearchCall

        snapshot = self._snapshot()
        try:
            return SearchCall.within(snapshot, scope, self.conversations, conversation)
        except ScopeError as exc:
            raise ToolError(str(exc)) from None

    def _snapshot(self) -> IndexSnapshot:
        """The served build; its IndexStoreError reaches the model as one line (errors.py)."""
        return self.live.snapshot()

    def _query_vectors(self, snapshot: IndexSnapshot, queries: list[str]) -> Any:
        try:
            return self.live.query_vectors(snapshot, queries, MODEL_WAIT_SECONDS)
        except ModelNotReady as exc:
            raise ToolError(str(exc)) from None


def _search_result(call: SearchCall, output: OutputWithMessage, render: Callable[[Any], str]) -> CallToolResult:
    """A search's result: its text leaves out the fields every chunk of the index shares, and its
    message says what a scoped search searched."""
    catalogue = call.snapshot.catalogue
    output._index_wide = frozenset(c for c in INDEX_WIDE if catalogue.only_value(c) is not None)
    return _result(_with_scope(output, call.scope, call.mask), render)


def _check_keyword_sizes(terms: list[str]) -> None:
    """Keywords are short terms: a sentence, a pasted document or a long punctuated string gets a
    tool error before any work is done, since a keyword's cost grows with its length and pieces."""
    for term in terms:
        if len(term) > MAX_KEYWORD_CHARS:
            raise ToolError(
                f"keywords must be short terms; got one of {len(term)} characters ({quoted(term)}); "
                f"keep each to at most {MAX_KEYWORD_CHARS}, or use a semantic search"
            )
        if len(term.split()) > MAX_KEYWORD_WORDS:
            raise ToolError(
                f"keywords must be short terms; got a {len(term.split())}-word sentence "
                f"({quoted(term)}); keep each to at most {MAX_KEYWORD_WORDS} words: split it into names and terms, "
                "or use a semantic search"
            )
    for term, pieces in zip(terms, words_of([term.lower() for term in terms])):
        if len(pieces) > MAX_KEYWORD_PIECES:
            raise ToolError(
                f"keywords must be short terms; got one of {len(pieces)} words and numbers between "
                f"punctuation ({quoted(term)}); pass at most {MAX_KEYWORD_PIECES} per keyword"
            )


def _with_scope(output: OutputWithMessage, scope: dict[str, Any] | None, mask: np.ndarray | None) -> OutputWithMessage:
    """The message says what a scoped search searched: the model then knows its counts are the scope's."""
    if mask is not None:
        chunks = int(mask.sum())
        searched = (
            f"Searched within the scope {json.dumps(scope, ensure_ascii=False)} ({chunks} of {len(mask)} chunks)."
        )
        output.message = f"{searched} {output.message}"
    return output


def _checked_query(query: str) -> str:
    query = query.strip()
    if not query:
        raise ToolError('query is empty; describe what to find, e.g. "where was Marie Curie born"')
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError(
            f"query has {len(query)} characters; keep it to at most {MAX_QUERY_CHARS} (one sub-question at a time)"
        )
    return query


def _checked_queries(queries: list[str]) -> list[str]:
    checked = list(dict.fromkeys(_checked_query(query) for query in queries if query.strip()))
    if not checked:
        raise ToolError('queries is empty; give one or more questions or descriptions, e.g. ["who discovered radium"]')
    if len(checked) > MAX_QUERIES:
        raise ToolError(f"{len(checked)} queries given; pass at most {MAX_QUERIES} reformulations per call")
    return checked


def _document(snapshot: IndexSnapshot, ref: str) -> DocumentLines:
    document = snapshot.documents.get(ref) if len(ref) <= 64 else None
    if document is None:
        raise ToolError(f"no document has the ref {quoted(ref)}; use a ref from the search results")
    return document


def _result(output: BaseModel, render: Callable[[Any], str]) -> CallToolResult:
    """Text and structured content, each complete on its own (hosts show one or the other)."""
    return CallToolResult(
        content=[TextContent(type="text", text=render(output))], structured_content=output.model_dump(exclude_none=True)
    )
