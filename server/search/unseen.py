"""Results a conversation has not seen: a search's places go to chunks with text the conversation
was not sent. A result that would bring nothing new (its whole chunk, or every sentence its snippet
would show, was sent before) is passed over and named, and the ranking goes on below it; one that
nearly repeats a result above it takes no place either (near_duplicates.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from arag_mcp.indexer.index.keywords import keyword_search
from arag_mcp.indexer.index.ranked import Hit, PassedOver

from .limits import EXCLUDE_ROUNDS, MAX_PASSED_OVER
from .near_duplicates import NearDuplicates
from .snippets import chunk_excerpt, keyword_cut, leading

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordFindings, KeywordMatch
    from arag_mcp.indexer.index.snapshot import IndexSnapshot

    from .search_calls import SearchCall

SameText = dict[str, list[tuple[str, str]]]
"""The near-duplicates left out, by the result they duplicate: its id → (id, title) of each."""


@dataclass(frozen=True)
class UnseenPage:
    """One page of a ranking whose places go to chunks with text the conversation was not sent."""

    hits: list[Hit]
    passed_over: list[PassedOver]
    """Those that ranked among them but whose text the conversation has."""
    next_offset: int | None
    """Where the ranking goes on, where it does."""
    same_text: SameText


def nothing_new(call: SearchCall, hits: list[Hit], cuts: list[Callable[[str], str]], whole_chunks: bool) -> list[bool]:
    """Whether each hit would bring nothing this conversation was not sent: its chunk, where results
    carry whole chunks; else every piece of its excerpt."""
    if whole_chunks:
        received = call.conversations.received(call.current)
        return [hit.chunk.chunk_id in received for hit in hits]
    chunks = call.chunks_of(hits)
    return [
        call.conversations.has_all_of(
            call.current, hit.chunk.chunk_id, chunk_excerpt(chunks[hit.chunk.chunk_id], hit.matched, cut).sentences
        )
        for hit, cut in zip(hits, cuts)
    ]


def unseen_keyword_findings(
    call: SearchCall, terms: list[str], top_k: int, offset: int, match: KeywordMatch, whole_chunks: bool
) -> tuple[KeywordFindings, SameText]:
    """keyword_search whose `top_k` places go to results with text the conversation has not seen:
    chunks it has whole are passed over in the ranking, and so are those whose matched sentences
    it was all sent, and those that nearly duplicate a result above them (found by trying, a few
    rounds at most). Also the near-duplicates left out, by the result they duplicate."""
    snapshot, current = call.snapshot, call.current
    exclude = np.zeros(len(snapshot.catalogue), dtype=bool)
    exclude[snapshot.catalogue.numbers_of(sorted(call.conversations.received(current)))] = True
    same_text: SameText = {}
    for _ in range(EXCLUDE_ROUNDS):
        findings = keyword_search(snapshot, terms, top_k, match, call.mask, offset, exclude)
        cuts = [keyword_cut(hit.keywords, match) for hit in findings.hits]
        known = nothing_new(call, findings.hits, cuts, whole_chunks)
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


def unseen_page(
    call: SearchCall,
    ranking: Callable[[IndexSnapshot, np.ndarray, int, np.ndarray | None], list[Hit]],
    vector: np.ndarray,
    top_k: int,
    offset: int,
    whole_chunks: bool,
) -> UnseenPage:
    """One query's `vector` ranked by `ranking` (retrieval.py: best sentence, or chunk vector); the `top_k` places
    from `offset` on go to chunks with text the conversation has not seen (its whole chunk, where
    `whole_chunks`; else its snippet), and the others that ranked there are named."""
    received = call.conversations.received(call.current)
    depth = offset + top_k + min(len(received), MAX_PASSED_OVER)
    if not whole_chunks:
        depth += top_k  # room for near-duplicates, which take no place
    ranked = ranking(call.snapshot, vector, depth, call.mask)
    window = ranked[offset:] if whole_chunks else call.with_texts(ranked[offset:])
    stale = nothing_new(call, window, [leading] * len(window), whole_chunks)
    hits, passed, position = [], [], offset
    same = NearDuplicates()
    for hit, known in zip(window, stale):
        if len(hits) >= top_k:
            break
        position += 1
        if known:
            passed.append(PassedOver(position, hit.chunk.chunk_id, hit.chunk.title))
        elif whole_chunks or same.original(hit.chunk) is None:
            hits.append(hit)
    more = position < len(ranked) or len(ranked) == depth
    return UnseenPage(hits, passed, position if more else None, same.of)
