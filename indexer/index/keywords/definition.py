"""keyword_search's ranking computed the slow, obvious way: what the engine's tests and the
benchmarks check it against.

Each function ranks chunks as the tool's contract says, over texts held in memory, with ties broken
by chunk id; keyword_search must return the same ids and scores (match sets and counts exact).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import regex

from .weights import K1, B
from .words import MarkedKeyword, compared_form, fold, qualified_subject, token_core, unspaced


def keyword_ranking(
    chunk_ids: Sequence[str], texts: Sequence[str], keywords: Sequence[str], top_k: int
) -> list[tuple[str, int]]:
    """The paper's keyword search: Σ count(keyword, lower-cased text) · len(keyword) per chunk,
    keywords stripped, lower-cased and counted once; chunks scoring 0 are left out."""
    terms = list(dict.fromkeys(k.strip().lower() for k in keywords if k.strip()))
    scored = []
    for cid, text in zip(chunk_ids, texts):
        lowered = text.lower()
        score = sum(lowered.count(term) * len(term) for term in terms)
        if score:
            scored.append((-score, cid))
    return [(cid, -score) for score, cid in sorted(scored)[:top_k]]


def folded_words(text: str) -> list[str]:
    """Whole-word matching's words: runs of letters, combining marks, digits and '_' in the lower-cased
    text, each "&" read as "and", folded."""
    return [fold(word) for word in regex.split(r"[^\p{L}\p{M}\p{N}_]+", text.lower().replace("&", " and ")) if word]


class WordCorpus:
    """Every chunk's title and text as folded words, made once, so that many keyword sets can be
    ranked by keyword_search's default definition without folding the corpus again for each."""

    def __init__(
        self, chunk_ids: Sequence[str], titles: Sequence[str], texts: Sequence[str], lengths: Sequence[int]
    ) -> None:
        """`lengths`: each chunk's length in tokens, as the index records it."""
        self.chunk_ids = list(chunk_ids)
        self.titles, self.texts = list(titles), list(texts)
        self.fields = [(folded_words(title), folded_words(text)) for title, text in zip(titles, texts)]
        self.subjects = [folded_words(qualified_subject(title.lower()) or "") for title in titles]
        """Of a title "subject (qualifier)", the subject's folded words ([] for other titles)."""
        self.words = [Counter(title) + Counter(text) for title, text in self.fields]
        average = sum(lengths) / len(self.chunk_ids) if sum(lengths) else 1.0
        self.norms = [K1 * (1 - B + B * length / average) for length in lengths]

    def ranking(self, keywords: Sequence[str], top_k: int) -> list[tuple[str, float]]:
        """keyword_search's default definition. A keyword (stripped; counted once per word
        sequence) occurs where its folded words occur as consecutive words of the chunk's title or
        of its text; a keyword's word with letters of a script written without spaces occurs in
        every word that holds it, and a keyword of that one word counts each time a word holds it.
        A keyword of one token whose punctuation or capitals matter ("C++", "ALL") counts where the
        title or text has it as written (words.MarkedKeyword), and is named by a title that is it;
        where no chunk has it so, it is matched by its words.
        A chunk scores Σ over keywords, in the order given, of
        idf · count·(K1+1) / (count + K1·(1 − B + B·length/average length)), with
        idf = ln(1 + (N − df + 0.5) / (df + 0.5)), N the chunks searched and df those holding
        every word of the keyword (anywhere in title or text). Order: first the chunks whose title,
        as folded words, is one of the keywords, then those titled "keyword (qualifier)", then the
        others (a named chunk that matches fewer of the keywords than some chunk does counts as
        other); within each, by score, then chunk id. When top_k >= the number of keywords, each
        matching keyword's best chunk (the first in that order, its class counted for that keyword
        alone) is kept, the remaining places going in order; the result is in that order."""
        terms: list[tuple[str, ...] | MarkedKeyword] = []
        counts: list[list[int]] = []
        for keyword in keywords:
            marked = MarkedKeyword.of(keyword) if keyword.strip() else None
            found = [self.count_as_written(marked, at) for at in range(len(self.chunk_ids))] if marked else []
            term = marked if any(found) else tuple(folded_words(keyword))
            if keyword.strip() and term not in terms:
                terms.append(term)
                counts.append(found if any(found) else [self.count(term, at) for at in range(len(self.chunk_ids))])
        holding = [
            sum(1 for count in found if count)
            if isinstance(term, MarkedKeyword)
            else sum(self.holds(term, at) for at in range(len(self.chunk_ids)))
            for term, found in zip(terms, counts)
        ]
        chunks = len(self.chunk_ids)
        idfs = [math.log(1 + (chunks - df + 0.5) / (df + 0.5)) for df in holding]
        scores: dict[str, float] = {}
        matched: list[list[str]] = [[] for _ in terms]
        for at, cid in enumerate(self.chunk_ids):
            score = 0.0
            for weight, found, matching in zip(idfs, counts, matched):
                count = found[at]
                score += weight * (count * (K1 + 1) / (count + self.norms[at]))
                if count:
                    matching.append(cid)
            if any(found[at] for found in counts):
                scores[cid] = score
        at_of = {cid: at for at, cid in enumerate(self.chunk_ids)}

        def naming(cid: str, wanted: Sequence[tuple[str, ...] | MarkedKeyword]) -> int:
            """0: titled as a keyword, 1: titled "keyword (qualifier)", 2: neither."""
            at = at_of[cid]
            title, subject = tuple(self.fields[at][0]), tuple(self.subjects[at])
            raw_title, raw_subject = self.titles[at].strip(), qualified_subject(self.titles[at])
            for form in (0, 1):
                for term in wanted:
                    if isinstance(term, MarkedKeyword):
                        named = raw_title if form == 0 else raw_subject
                        if named is not None and compared_form(token_core(named), term.capitals) == term.core:
                            return form
                    elif (title if form == 0 else subject) and (title if form == 0 else subject) == term:
                        return form
            return 2

        matched_by = {cid: sum(1 for found in counts if found[at_of[cid]]) for cid in scores}
        most = max(matched_by.values(), default=0) if len(terms) > 1 else 0

        def order(cid: str, wanted: Sequence[tuple[str, ...] | MarkedKeyword] = terms) -> tuple[int, float, str]:
            named = naming(cid, wanted)
            if wanted is terms and matched_by[cid] < most:
                named = 2  # a page that matches fewer keywords than some chunk ranks by score
            return named, -scores[cid], cid

        ranked = sorted(scores, key=order)
        chosen = ranked[:top_k]
        if top_k >= len(terms):
            bests = [
                min(matching, key=lambda cid: order(cid, [term])) for term, matching in zip(terms, matched) if matching
            ]
            kept = list(dict.fromkeys(bests))
            chosen = kept + [cid for cid in ranked if cid not in kept][: top_k - len(kept)]
        return [(cid, scores[cid]) for cid in sorted(chosen, key=order)]

    def count_as_written(self, marked: MarkedKeyword, at: int) -> int:
        """How often a keyword whose punctuation or capitals matter occurs in chunk `at`'s title and
        text, as written (words.MarkedKeyword), found by scanning them."""
        return sum(
            marked.count_in(compared_form(field, marked.capitals)) for field in (self.titles[at], self.texts[at])
        )

    def holds(self, words: tuple[str, ...], at: int) -> bool:
        """Whether chunk `at` holds every one of these words (one of a script written without
        spaces: inside some word)."""
        present = self.words[at]
        return bool(words) and all(
            any(word in held for held in present) if unspaced(word) else word in present for word in words
        )

    def count(self, words: tuple[str, ...], at: int) -> int:
        """How often these folded words occur in a row in chunk `at`'s title and text."""
        if not self.holds(words, at):
            return 0
        fields = self.fields[at]
        if len(words) == 1 and unspaced(words[0]):
            return sum(word.count(words[0]) for field in fields for word in field)
        return sum(
            1
            for field in fields
            for start in range(len(field) - len(words) + 1)
            if all(
                wanted in word if unspaced(wanted) else wanted == word
                for wanted, word in zip(words, field[start : start + len(words)])
            )
        )
