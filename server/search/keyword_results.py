"""What keyword_search sends: the keywords' findings in places the conversation has not seen, with
other words that match them, each result as its whole chunk or a snippet cut around its keywords."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arag_mcp.indexer.index.keywords import forms_note, stand_ins, stand_ins_note, with_other_forms, with_stand_ins

from .limits import MAX_KEYWORDS
from .sending import deliveries, sent_snippets
from .snippets import keyword_cut
from .unseen import SameText, unseen_keyword_findings

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordFindings, KeywordMatch

    from .conversations import Delivery
    from .search_calls import SearchCall
    from .snippets import Snippet


@dataclass(frozen=True)
class KeywordResults:
    findings: KeywordFindings
    same_text: SameText
    deliveries: list[Delivery] | None
    """Whole chunks, where the profile's searches send them."""
    snippets: list[Snippet]
    other_words: str
    """What other words of the keywords match (word_forms.forms_note, identifiers.stand_ins_note)."""


def keyword_results_for(
    call: SearchCall,
    tool: str,
    terms: list[str],
    top_k: int,
    offset: int,
    forms: bool,
    match: KeywordMatch,
    full_text: bool,
) -> KeywordResults:
    """`tool`'s keyword_search for `terms` (unseen.py), with whole-word matching also for their other word forms
    where `forms` asks, and for the identifiers that name a keyword's words where it matches none;
    `full_text`: results carry whole chunks."""
    by_words = match == "word"
    if forms and by_words:
        terms = with_other_forms(call.snapshot.keywords, terms, MAX_KEYWORDS)
    findings, same_text = unseen_keyword_findings(call, terms, top_k, offset, match, full_text)
    standing = stand_ins(call.snapshot.keywords, findings.keywords, findings.per_keyword) if by_words else {}
    if standing:
        terms = with_stand_ins(terms, standing, MAX_KEYWORDS)
        findings, same_text = unseen_keyword_findings(call, terms, top_k, offset, match, full_text)
    sent = deliveries(call, tool, findings.hits) if full_text else None
    cuts = [keyword_cut(hit.keywords, match) for hit in findings.hits]
    snippets = sent_snippets(call, tool, findings.hits, cuts, sent is not None)
    other_words = stand_ins_note(standing, findings)
    if by_words and not forms:
        other_words += forms_note(call.snapshot, findings, call.mask)
    return KeywordResults(findings, same_text, sent, snippets, other_words)
