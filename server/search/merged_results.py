"""What a search with several queries sends (semantic_search with queries, search): each query's
best chunks merged (retrieval.py), with the chunks its keywords match where it has them, each result
a snippet of what the conversation was not sent. A result the conversation has all of keeps its
place, said to be sent before (snippets.Snippet.nothing_new)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arag_mcp.indexer.index.keywords import keyword_search

from .retrieval import MergedHit, merged_semantic_search, with_keyword_hits
from .sending import sent_snippets
from .snippets import keyword_cut, leading

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.indexer.index.keywords import KeywordFindings, KeywordMatch

    from .search_calls import SearchCall
    from .snippets import Snippet


@dataclass(frozen=True)
class MergedResults:
    merged: list[MergedHit]
    snippets: list[Snippet]
    findings: KeywordFindings | None = None
    """What the keywords found, where there were keywords."""


def merged_results_for(call: SearchCall, tool: str, vectors: Sequence[np.ndarray], top_k: int) -> MergedResults:
    """`tool`'s results for the queries' `vectors`, `top_k` each, merged; snippets cut to their sentences' starts."""
    found = merged_semantic_search(call.snapshot, vectors, top_k, call.mask)
    hits = [merged.hit for merged in found]
    return MergedResults(found, sent_snippets(call, tool, hits, [leading] * len(hits), False))


def merged_with_keywords(
    call: SearchCall, tool: str, vectors: Sequence[np.ndarray], terms: list[str], top_k: int, match: KeywordMatch
) -> MergedResults:
    """`merged_results_for`, then the chunks keyword search finds for `terms` (top_k of them) joined:
    on the result of a chunk both found, or after the others."""
    found = merged_semantic_search(call.snapshot, vectors, top_k, call.mask)
    findings = keyword_search(call.snapshot, terms, top_k, match, call.mask) if terms else None
    if findings is not None:
        found = with_keyword_hits(found, findings.hits)
    hits = [replace(merged.hit, matched=_matched(merged)) for merged in found]
    snippets = sent_snippets(call, tool, hits, [_cut(merged, match) for merged in found], False)
    return MergedResults(found, snippets, findings)


def _matched(merged: MergedHit) -> list[str]:
    """A result's matched sentences: those nearest its queries, then its keyword sentences."""
    matched = list(merged.hit.matched) if merged.queries else []
    found = merged.keyword_hit
    return matched + [s for s in found.matched if s not in matched] if found is not None else matched


def _cut(merged: MergedHit, match: KeywordMatch) -> Callable[[str], str]:
    """How a result shortens a long sentence: around its keywords, where keywords found it."""
    found = merged.keyword_hit
    return keyword_cut(found.keywords, match) if found is not None else leading
