"""The checks several tools make before any work: a request they cannot serve is a ToolError whose
one line names the fix (errors.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arag_mcp.indexer.index import keywords as keyword_engine
from arag_mcp.indexer.index.keywords import words_of
from arag_mcp.server import search as searching
from arag_mcp.server.search.limits import (
    MAX_KEYWORD_CHARS,
    MAX_KEYWORD_PIECES,
    MAX_KEYWORD_WORDS,
    MAX_KEYWORDS,
    MAX_QUERIES,
    MAX_QUERY_CHARS,
    MODEL_WAIT_SECONDS,
    quoted,
)
from arag_mcp.server.search.live_index import ModelNotReady
from mcp.server.mcpserver.exceptions import ToolError

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.indexer.index.document_lines import DocumentLines
    from arag_mcp.indexer.index.keywords import KeywordMatch
    from arag_mcp.indexer.index.snapshot import IndexSnapshot
    from arag_mcp.server.search.search_calls import SearchCall
    from arag_mcp.server.served import ServedIndex


def checked_query(query: str) -> str:
    query = query.strip()
    if not query:
        raise ToolError('query is empty; describe what to find, e.g. "where was Marie Curie born"')
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError(
            f"query has {len(query)} characters; keep it to at most {MAX_QUERY_CHARS} (one sub-question at a time)"
        )
    return query


def checked_queries(queries: list[str]) -> list[str]:
    checked = list(dict.fromkeys(checked_query(query) for query in queries if query.strip()))
    if not checked:
        raise ToolError('queries is empty; give one or more questions or descriptions, e.g. ["who discovered radium"]')
    if len(checked) > MAX_QUERIES:
        raise ToolError(f"{len(checked)} queries given; pass at most {MAX_QUERIES} reformulations per call")
    return checked


def checked_keywords(keywords: list[str], match: KeywordMatch) -> list[str]:
    terms = [k.strip() for k in keywords if k.strip()]
    if not terms:
        raise ToolError('keywords is empty; give one or more short terms, e.g. ["Marie Curie"]')
    if len(terms) > MAX_KEYWORDS:
        raise ToolError(f"{len(terms)} keywords given; pass at most {MAX_KEYWORDS}, the most specific first")
    _check_keyword_sizes(terms)
    if match == "word":
        unmatchable = keyword_engine.wordless(terms)  # Arrow loads with the first search, after the handshake
        if unmatchable:
            raise ToolError(
                f"keyword {quoted(unmatchable[0])} has no letter or digit; keywords match whole words, "
                "so give names, terms or numbers"
            )
    return terms


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


def search_call(served: ServedIndex, scope: dict[str, Any] | None, conversation: str | None) -> SearchCall:
    """The served build, the chunks `scope` admits (a scope that cannot match is a tool error) and the
    resumed conversation."""
    snapshot = served.live.snapshot()
    try:  # NumPy and Arrow load with the first search, after the handshake
        return searching.SearchCall.within(snapshot, scope, served.conversations, conversation)
    except searching.ScopeError as exc:
        raise ToolError(str(exc)) from None


def query_vectors(served: ServedIndex, snapshot: IndexSnapshot, queries: list[str]) -> np.ndarray:
    """The queries' vectors, by the model `snapshot` was built with; a model still loading is a tool error."""
    try:
        return served.live.query_vectors(snapshot, queries, MODEL_WAIT_SECONDS)
    except ModelNotReady as exc:
        raise ToolError(str(exc)) from None


def checked_document(snapshot: IndexSnapshot, ref: str) -> DocumentLines:
    """The document `ref` names (a chunk id, or the document part before '-')."""
    document = snapshot.documents.get(ref) if len(ref) <= 64 else None
    if document is None:
        raise ToolError(f"no document has the ref {quoted(ref)}; use a ref from the search results")
    return document
