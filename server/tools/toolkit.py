"""The tool functions every profile draws from, bound to one served index and its conversations.

Each public method is one MCP tool: its signature is the tool's input schema, its return
annotation the output schema. The search functions are imported by the calls that use them: they
load NumPy and Arrow, which a server need not load before it answers the handshake. Profiles (profiles.py) choose which ones a server offers, under
which description, and whether searches return whole chunks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from arag_mcp.indexer.file_types import LINE_LAID_TYPES
from arag_mcp.indexer.index.chunks import Chunk
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
from arag_mcp.server.search.conversations import Conversation, Conversations, Delivery, Origin
from arag_mcp.server.search.limits import (
    EXCLUDE_ROUNDS,
    MAX_CHUNK_IDS,
    MAX_FIND_PATTERN_CHARS,
    MAX_FIND_PATTERNS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORD_PIECES,
    MAX_KEYWORD_WORDS,
    MAX_KEYWORDS,
    MAX_OFFSET,
    MAX_PASSED_OVER,
    MAX_QUERIES,
    MAX_QUERY_CHARS,
    MAX_RESULTS_PER_QUERY,
    MAX_TOP_K,
    MODEL_WAIT_SECONDS,
    quoted,
)
from arag_mcp.server.search.live_index import LiveIndex, ModelNotReady
from arag_mcp.server.search.snippets import Excerpt, Snippet, excerpt, keyword_cut, leading, snippet
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, BeforeValidator, Field

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.indexer.index.document_lines import DocumentLines
    from arag_mcp.indexer.index.keywords import KeywordFindings, KeywordMatch
    from arag_mcp.indexer.index.snapshot import IndexSnapshot
    from arag_mcp.server.search.retrieval import Hit, MergedHit


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


@dataclass(frozen=True)
class VectorRanking:
    """A vector search tool's ranking: its search function, the tool's name, whether it sends whole
    chunks, and what its results are ranked by (said in the message)."""

    search: Callable[..., list[Hit]]
    tool: str
    whole_chunks: bool
    ranked_by: str


@dataclass(frozen=True)
class SearchCall:
    """What one search tool call works within: the served build, the chunks its scope admits and the
    conversation; its result says what a scoped search searched."""

    snapshot: IndexSnapshot
    scope: dict[str, Any] | None
    mask: np.ndarray | None
    current: Conversation

    def result(self, output: OutputWithMessage, render: Callable[[Any], str]) -> CallToolResult:
        catalogue = self.snapshot.catalogue
        output._index_wide = frozenset(c for c in INDEX_WIDE if catalogue.only_value(c) is not None)
        return _result(_with_scope(output, self.scope, self.mask), render)


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
        from arag_mcp.indexer.index.keywords import (
            forms_note,
            stand_ins,
            stand_ins_note,
            with_other_forms,
            with_stand_ins,
        )

        terms = self._checked_keywords(keywords)
        call = self._search_call(scope, conversation)
        by_words = self.keyword_match == "word"
        if forms and by_words:
            terms = with_other_forms(call.snapshot.keywords, terms, MAX_KEYWORDS)
        findings, same_text = self._new_keyword_findings(call, terms, top_k, offset)
        standing = stand_ins(call.snapshot.keywords, findings.keywords, findings.per_keyword) if by_words else {}
        if standing:
            terms = with_stand_ins(terms, standing, MAX_KEYWORDS)
            findings, same_text = self._new_keyword_findings(call, terms, top_k, offset)
        deliveries = self._deliver(call, "keyword_search", findings.hits)
        cuts = [keyword_cut(hit.keywords, self.keyword_match) for hit in findings.hits]
        snippets = self._snippets(call, "keyword_search", findings.hits, cuts, deliveries is not None)
        other_words = stand_ins_note(standing, findings)
        if by_words and not forms:
            other_words += forms_note(call.snapshot, findings, call.mask)
        output = keyword_output(
            findings, call.current.handle, call.current.notice, deliveries, snippets, other_words, same_text
        )
        return call.result(output, keyword_text)

    def semantic_search(
        self,
        query: Query,
        top_k: TopK = 5,
        scope: ScopeConditions = None,
        offset: Offset = 0,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        from arag_mcp.server.search.retrieval import semantic_search

        ranking = VectorRanking(semantic_search, "semantic_search", False, "their best sentence")
        return self._vector_search(ranking, query, top_k, scope, offset, conversation)

    def naive_embedding_search(
        self,
        query: Query,
        top_k: TopK = 5,
        scope: ScopeConditions = None,
        offset: Offset = 0,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        from arag_mcp.server.search.retrieval import naive_search

        ranking = VectorRanking(naive_search, "naive_embedding_search", True, "their chunk vector")
        return self._vector_search(ranking, query, top_k, scope, offset, conversation)

    def semantic_search_queries(
        self, queries: Queries, top_k: TopK = 5, scope: ScopeConditions = None, conversation: ConversationHandle = None
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        from arag_mcp.server.search.retrieval import merged_semantic_search

        checked = _checked_queries(queries)
        call = self._search_call(scope, conversation)
        found = merged_semantic_search(call.snapshot, self._query_vectors(call.snapshot, checked), top_k, call.mask)
        hits = [merged.hit for merged in found]
        snippets = self._snippets(call, "semantic_search", hits, [leading] * len(hits), False)
        ranked_by = f"their best sentence over {len(checked)} {'query' if len(checked) == 1 else 'queries'}"
        output = semantic_output(hits, call.current.handle, call.current.notice, None, snippets, ranked_by)
        for result, merged in zip(output.results, found):
            result.queries = merged.queries
        return call.result(output, semantic_text)

    def search(
        self,
        queries: Queries,
        top_k: PerQuery = 5,
        keywords: ExactNames = None,
        scope: ScopeConditions = None,
        conversation: ConversationHandle = None,
    ) -> Annotated[CallToolResult, DocumentSearchOutput]:
        from arag_mcp.indexer.index.keywords import keyword_search
        from arag_mcp.server.search.retrieval import merged_semantic_search, with_keyword_hits

        checked = _checked_queries(queries)
        terms = self._checked_keywords(keywords) if keywords else []
        call = self._search_call(scope, conversation)
        found = merged_semantic_search(call.snapshot, self._query_vectors(call.snapshot, checked), top_k, call.mask)
        findings = keyword_search(call.snapshot, terms, top_k, self.keyword_match, call.mask) if terms else None
        if findings is not None:
            found = with_keyword_hits(found, findings.hits)
        hits = [replace(merged.hit, matched=self._search_matched(merged)) for merged in found]
        snippets = self._snippets(call, "search", hits, [self._search_cut(merged) for merged in found], False)
        lines = [call.snapshot.documents.line_count(hit.chunk.chunk_id) or 0 for hit in hits]
        output = search_output(found, snippets, lines, checked, findings, call.current.handle, call.current.notice)
        return call.result(output, search_text)

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
        ranking: VectorRanking,
        query: str,
        top_k: int,
        scope: dict[str, Any] | None,
        offset: int,
        conversation: str | None,
    ) -> CallToolResult:
        """One query's vector ranked by `ranking`'s search (best sentence, or chunk vector), sent as
        snippets or as whole chunks; the `top_k` places from `offset` on go to chunks with text the
        conversation has not seen, and the others that ranked there are named."""
        from arag_mcp.indexer.index.ranked import PassedOver
        from arag_mcp.server.search.near_duplicates import NearDuplicates

        query = _checked_query(query)
        call = self._search_call(scope, conversation)
        received = self.conversations.received(call.current)
        depth = offset + top_k + min(len(received), MAX_PASSED_OVER)
        if not ranking.whole_chunks:
            depth += top_k  # room for near-duplicates, which take no place
        ranked = ranking.search(call.snapshot, self._query_vector(call.snapshot, query), depth, call.mask)
        window = ranked[offset:] if ranking.whole_chunks else _with_texts(call.snapshot, ranked[offset:])
        stale = self._nothing_new(call, window, [leading] * len(window), ranking.whole_chunks)
        hits, passed, position = [], [], offset
        same = NearDuplicates()
        for hit, known in zip(window, stale):
            if len(hits) >= top_k:
                break
            position += 1
            if known:
                passed.append(PassedOver(position, hit.chunk.chunk_id, hit.chunk.title))
            elif ranking.whole_chunks or same.original(hit.chunk) is None:
                hits.append(hit)
        more = position < len(ranked) or len(ranked) == depth
        deliveries = self._deliver(call, ranking.tool, hits, always=ranking.whole_chunks)
        snippets = self._snippets(call, ranking.tool, hits, [leading] * len(hits), deliveries is not None)
        output = semantic_output(
            hits,
            call.current.handle,
            call.current.notice,
            deliveries,
            snippets,
            ranking.ranked_by,
            passed,
            position if more else None,
            same.of,
        )
        return call.result(output, semantic_text)

    def _new_keyword_findings(
        self, call: SearchCall, terms: list[str], top_k: int, offset: int
    ) -> tuple[KeywordFindings, dict[str, list[tuple[str, str]]]]:
        """keyword_search whose `top_k` places go to results with text the conversation has not seen:
        chunks it has whole are passed over in the ranking, and so are those whose matched sentences
        it was all sent, and those that nearly duplicate a result above them (found by trying, a few
        rounds at most). Also the near-duplicates left out, by the result they duplicate."""
        import numpy as np
        from arag_mcp.indexer.index.keywords import keyword_search
        from arag_mcp.server.search.near_duplicates import NearDuplicates

        snapshot, current = call.snapshot, call.current
        exclude = np.zeros(len(snapshot.catalogue), dtype=bool)
        exclude[snapshot.catalogue.numbers_of(sorted(self.conversations.received(current)))] = True
        same_text: dict[str, list[tuple[str, str]]] = {}
        for _ in range(EXCLUDE_ROUNDS):
            findings = keyword_search(snapshot, terms, top_k, self.keyword_match, call.mask, offset, exclude)
            cuts = [keyword_cut(hit.keywords, self.keyword_match) for hit in findings.hits]
            known = self._nothing_new(call, findings.hits, cuts, self.full_text)
            same = NearDuplicates()
            duplicates = [not old and same.original(hit.chunk) is not None for hit, old in zip(findings.hits, known)]
            for original, left_out in same.of.items():
                same_text.setdefault(original, []).extend(left_out)
            stale = [hit.chunk.chunk_id for hit, old, twin in zip(findings.hits, known, duplicates) if old or twin]
            if not stale:
                break
            exclude[snapshot.catalogue.numbers_of(stale)] = True
        shown = {hit.chunk.chunk_id for hit in findings.hits}
        same_text = {original: twins for original, twins in same_text.items() if original in shown}
        twins = {chunk_id for left_out in same_text.values() for chunk_id, _ in left_out}
        passed_over = [passed for passed in findings.passed_over if passed.chunk_id not in twins]
        return replace(findings, passed_over=passed_over), same_text

    def _nothing_new(
        self, call: SearchCall, hits: list[Hit], cuts: list[Callable[[str], str]], whole_chunks: bool
    ) -> list[bool]:
        """Whether each hit would bring nothing this conversation was not sent: its chunk, where results
        carry whole chunks; else every piece of its excerpt."""
        if whole_chunks:
            received = self.conversations.received(call.current)
            return [hit.chunk.chunk_id in received for hit in hits]
        chunks = _chunks_of(call.snapshot, hits)
        return [
            self.conversations.has_all_of(
                call.current, hit.chunk.chunk_id, _excerpt(chunks[hit.chunk.chunk_id], hit.matched, cut).pieces
            )
            for hit, cut in zip(hits, cuts)
        ]

    def _deliver(self, call: SearchCall, tool: str, hits: list[Hit], always: bool = False) -> list[Delivery] | None:
        """Whole chunks for the conversation (read-before and size bound applied), where this tool sends
        them; otherwise None."""
        if not (self.full_text or always):
            return None
        wanted = [hit.chunk.chunk_id for hit in hits]
        origins = [Origin(call.current.calls, tool, rank) for rank in range(1, len(hits) + 1)]
        return self.conversations.deliver(call.current, wanted, _chunks_of(call.snapshot, hits), origins)

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

    def _search_matched(self, merged: MergedHit) -> list[str]:
        """A search result's matched sentences: those nearest its queries, then its keyword sentences."""
        matched = list(merged.hit.matched) if merged.queries else []
        found = merged.keyword_hit
        return matched + [s for s in found.matched if s not in matched] if found is not None else matched

    def _search_cut(self, merged: MergedHit) -> Callable[[str], str]:
        """How a search result shortens a long sentence: around its keywords, where keywords found it."""
        found = merged.keyword_hit
        return keyword_cut(found.keywords, self.keyword_match) if found is not None else leading

    def _snippets(
        self, call: SearchCall, tool: str, hits: list[Hit], cuts: list[Callable[[str], str]], whole_chunks: bool
    ) -> list[Snippet]:
        """What each hit shows of its chunk (snippets.excerpt, each long sentence shortened by its
        `cuts`): where the results carry whole chunks, their matched sentences (the chunk text is what
        is tracked); else what this conversation was not sent."""
        if whole_chunks:
            return [
                snippet(Excerpt([cut(s) for s in hit.matched], False, hit.chunk.sentence_count), set())
                for hit, cut in zip(hits, cuts)
            ]
        chunks = _chunks_of(call.snapshot, hits)
        return [
            self.conversations.send_snippet(
                call.current,
                hit.chunk.chunk_id,
                _excerpt(chunks[hit.chunk.chunk_id], hit.matched, cut),
                Origin(call.current.calls, tool, rank),
            )
            for rank, (hit, cut) in enumerate(zip(hits, cuts), 1)
        ]

    def _search_call(self, scope: dict[str, Any] | None, conversation: str | None) -> SearchCall:
        """The served build, the scope's chunks (a bad scope is a tool error) and the resumed conversation."""
        snapshot = self._snapshot()
        mask = _scope_mask(snapshot, scope)
        return SearchCall(snapshot, scope, mask, self.conversations.resume(conversation))

    def _snapshot(self) -> IndexSnapshot:
        """The served build; its IndexStoreError reaches the model as one line (errors.py)."""
        return self.live.snapshot()

    def _query_vector(self, snapshot: IndexSnapshot, query: str) -> Any:
        return self._query_vectors(snapshot, [query])[0]

    def _query_vectors(self, snapshot: IndexSnapshot, queries: list[str]) -> Any:
        try:
            return self.live.query_vectors(snapshot, queries, MODEL_WAIT_SECONDS)
        except ModelNotReady as exc:
            raise ToolError(str(exc)) from None


def _with_texts(snapshot: IndexSnapshot, hits: list[Hit]) -> list[Hit]:
    """The hits with their chunks' texts, read once for all that later look at them."""
    chunks = _chunks_of(snapshot, hits)
    return [replace(hit, chunk=chunks[hit.chunk.chunk_id]) for hit in hits]


def _excerpt(chunk: Chunk, matched: list[str], cut: Callable[[str], str]) -> Excerpt:
    """What a result shows of `chunk` (snippets.excerpt); where it is code, each sentence with the
    indent of its first line, its lines kept."""
    if chunk.file_type not in LINE_LAID_TYPES:
        return excerpt(chunk.sentences, matched, cut)
    text = chunk.text
    indented = {text[start:end]: text[text.rfind("\n", 0, start) + 1 : end] for start, end in chunk.sentence_spans}
    sentences = [indented[sentence] for sentence in chunk.sentences]
    return excerpt(sentences, [indented.get(sentence, sentence) for sentence in matched], cut, lines=True)


def _chunks_of(snapshot: IndexSnapshot, hits: list[Hit]) -> dict[str, Chunk]:
    """The hits' chunks with their texts, by id: read where a hit names its chunk by header alone."""
    found = {hit.chunk.chunk_id: hit.chunk for hit in hits if isinstance(hit.chunk, Chunk)}
    found.update(snapshot.chunks.by_id([hit.chunk.chunk_id for hit in hits if hit.chunk.chunk_id not in found]))
    return found


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


def _scope_mask(snapshot: IndexSnapshot, scope: dict[str, Any] | None) -> np.ndarray | None:
    """The chunks a scope admits (scope.py), or None for the whole index; a bad scope is a tool error."""
    from arag_mcp.server.search.scope import ScopeError, in_scope

    try:
        return in_scope(snapshot, scope)
    except ScopeError as exc:
        raise ToolError(str(exc)) from None


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
