"""keyword_search: chunks holding exact keywords (names, titles, numbers, terms), ranked by the
keyword engine (arag_mcp.indexer.index.keywords), in places the conversation has not seen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

from arag_mcp.server import search as searching
from arag_mcp.server.output.chunk_results import (
    ChunkFields,
    DeliveryFields,
    KeywordCount,
    PassedOverResult,
    ToolOutput,
    chunks_phrase,
    hit_fields,
    next_offset_text,
    next_step,
    passed_over_results,
    passed_over_text,
    ranked_text,
    same_text_note,
    shared_source,
    snippet_text,
    with_notice,
)
from arag_mcp.server.output.descriptions import FULL_TEXT_AFTER, SNIPPET_AFTER
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from .argument_types import ConversationHandle, Offset, ScopeConditions, TopK
from .checks import checked_keywords, search_call
from .results import search_result
from .tool_spec import ToolSpec

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordFindings, KeywordMatch
    from arag_mcp.server.search.conversations import Delivery
    from arag_mcp.server.search.snippets import Snippet

    from .profiles import Profile

Keywords = Annotated[list[str], Field(description="names, titles, numbers, exact terms")]
Forms = Annotated[bool, Field(description="also match other word forms (charter: chartered)")]

DESCRIPTION = """Find chunks containing exact keywords: names, titles, dates, numbers, terms, phrases.
{matching}

GOOD: ["Marie Curie", "Nobel Prize", "1911"]
BAD: ["Marie Curie", "married"] (a relation word: search the name, read its page)
BAD: ["who won the Nobel Prize in 1911"] (a sentence: use {sentence_tool})

{after}"""
MATCHING = {
    "word": (
        "Keywords match whole words, ignoring case and accents. A page titled as a keyword comes "
        "first; then chunks rank by keyword rarity (BM25). The header counts each keyword's chunks "
        "(0 proves an absence)."
    ),
    "substring": "Keywords match as case-insensitive substrings of the text; a chunk scores the sum of "
    "occurrences x keyword length. The header gives each keyword's count of chunks (0 proves an absence).",
}
"""What a keyword match is, by --keyword-match."""


def description(profile: Profile, keyword_match: KeywordMatch) -> str:
    return DESCRIPTION.format(
        matching=MATCHING[keyword_match],
        sentence_tool="semantic_search" if "semantic_search" in profile.tool_names else "several short keywords",
        after=FULL_TEXT_AFTER if profile.full_text else SNIPPET_AFTER,
    )


class KeywordMatchFields(BaseModel):
    score: float | int = Field(
        description="the keyword score the tool description defines: by keyword rarity (BM25, to 2 "
        "decimals) with whole-word matching; occurrences x keyword length, summed, with substring matching"
    )
    keywords: list[str] = Field(description="the keywords this chunk matched")
    page_of: str | None = Field(None, description="the keyword whose page this is: named pages come first")
    snippet: str | None = Field(
        None,
        description="the whole chunk when it is short, else its sentences that contain a keyword (long ones cut "
        "around it, each after the sentence before where it opens with a pronoun), joined with ' ... '",
    )


# Its chunk, how it matched, then its text, as SemanticResult's (chunk_results.py). No docstring: it
# would become the output schema's.
class KeywordResult(DeliveryFields, KeywordMatchFields, ChunkFields):
    pass


class KeywordSearchOutput(ToolOutput):
    matching_chunks: int = Field(description="chunks any keyword matches, in all (at least, with an upper bound)")
    matching_chunks_up_to: int | None = None
    keyword_counts: list[KeywordCount]
    source: str | None = Field(None, description="the source of every result, when they share one")
    results: list[KeywordResult]
    passed_over: list[PassedOverResult] | None = Field(
        None, description="chunks that ranked among these but whose text shown here this conversation was already sent"
    )
    next_offset: int | None = Field(None, description="pass as `offset` to see the results after these")


def keyword_search(
    ctx: Context,
    keywords: Keywords,
    top_k: TopK = 5,
    scope: ScopeConditions = None,
    offset: Offset = 0,
    forms: Forms = False,
    conversation: ConversationHandle = None,
) -> Annotated[CallToolResult, KeywordSearchOutput]:
    served = served_index(ctx)
    terms = checked_keywords(keywords, served.keyword_match)
    call = search_call(served, scope, conversation)
    found = searching.keyword_results_for(
        call, "keyword_search", terms, top_k, offset, forms, served.keyword_match, served.full_text
    )
    output = keyword_output(
        found.findings,
        call.current.handle,
        call.current.notice,
        found.deliveries,
        found.snippets,
        found.other_words,
        found.same_text,
    )
    return search_result(call, output, keyword_text)


def keyword_output(
    findings: KeywordFindings,
    conversation: str,
    notice: str,
    deliveries: list[Delivery] | None,
    snippets: list[Snippet],
    other_words: str = "",
    same_text: Mapping[str, list[tuple[str, str]]] | None = None,
) -> KeywordSearchOutput:
    """`other_words`: what other words of the keywords match (word_forms.forms_note), said after the
    counts; `same_text`: the near-duplicates left out, by the result they duplicate (near_duplicates.py)."""
    source = shared_source(findings.hits)
    results = []
    for at, (hit, snippet) in enumerate(zip(findings.hits, snippets)):
        fields = hit_fields(hit, source, None if deliveries is None else deliveries[at], snippet)
        whole = fields["whole_chunk"] and not snippet.already_sent
        text = None if fields["already_sent"] else snippet_text(snippet, whole)
        results.append(
            KeywordResult(
                **fields, score=round(hit.score, 2), keywords=list(hit.keywords), page_of=hit.page_of, snippet=text
            )
        )
    per_keyword = "; ".join(
        f"{keyword!r}: {chunks_phrase(count)}" for keyword, count in zip(findings.keywords, findings.per_keyword)
    )
    matching = findings.matching
    if results:
        verb = "matches" if matching.exact and matching.at_least == 1 else "match"
        count = f"{chunks_phrase(matching)} {verb} ({per_keyword}); showing {len(results)}, best first."
        partial = "A snippet marked 'k of n sentences' is partial: chunk_read the relevant ids."
        message = f"{count} {next_step(deliveries, partial, results)}"
    elif findings.passed_over:
        message = f"{chunks_phrase(matching)} match ({per_keyword}); none holds text this conversation was not sent."
    else:
        message = f"No chunk matches ({per_keyword}). Try shorter or alternative terms, or another search."
    message += other_words + same_text_note(same_text, [hit.chunk.chunk_id for hit in findings.hits])
    message += passed_over_text(findings.passed_over)
    message += next_offset_text(findings.next_offset, findings.offset + len(results))
    return KeywordSearchOutput(
        message=with_notice(notice, message),
        conversation=conversation,
        matching_chunks=matching.at_least,
        matching_chunks_up_to=None if matching.exact else matching.at_most,
        keyword_counts=[
            KeywordCount(keyword=k, chunks=c.at_least, chunks_up_to=None if c.exact else c.at_most)
            for k, c in zip(findings.keywords, findings.per_keyword)
        ],
        source=source,
        results=results,
        passed_over=passed_over_results(findings.passed_over),
        next_offset=findings.next_offset,
    )


def keyword_text(output: KeywordSearchOutput) -> str:
    rows = [
        (
            r,
            f"{r.score} | matched: {', '.join(repr(k) for k in r.keywords)}"
            + (f" | page of {r.page_of!r}" if r.page_of else ""),
            f"snippet: {r.snippet}",
        )
        for r in output.results
    ]
    return ranked_text(output, output.source, rows)


TOOL = ToolSpec(
    name="keyword_search",
    title="Keyword search",
    function=keyword_search,
    description=description,
    searches=True,
)
