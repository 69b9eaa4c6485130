"""Other forms of a keyword's words that the index holds: "charter" finds no chunk where the text
says "chartered", and a model that is told so searches again with the form the index has.

Keywords match whole words as written (search.py), which keeps names exact. A word's other forms
are found by a Snowball stemmer (snowballstemmer, which uses PyStemmer's C code where it is
installed) over the index's own vocabulary: the words that share the keyword's stem. Stems are
English; a word of another script, or one whose stem no other word shares, has no other forms.
The vocabulary is sorted, and the forms of a word begin with the letters its stem shares with it
("happy" → stem "happi": the words from "happ"), so only that range is stemmed.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from .identifiers import identifiers_holding, listed_counts
from .search import ChunkCount, KeywordFindings, SearchedIndex, keyword_search
from .words import words_of

if TYPE_CHECKING:
    import numpy as np

    from .lookup import KeywordLookup

SHORTEST_PREFIX = 3
"""Letters a range of candidate forms begins with, at the least: shorter ranges hold too many words."""
MOST_CANDIDATES = 4_000
"""Vocabulary words stemmed per segment and word, at most: a bound on a call's work."""
MOST_FORMS = 5
"""Other forms named (or matched) per keyword word."""
FEW_CHUNKS = 2
"""A keyword matching at most this many chunks is told of its words' other forms and counts."""


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - snowballstemmer's or PyStemmer's class
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def other_forms(lookup: KeywordLookup, word: str) -> list[str]:
    """The words of the index (folded, as keywords compare them) that share `word`'s stem, other than
    `word` itself, shortest first; none for a word that is not lower-case ASCII letters."""
    if not (word.isascii() and word.isalpha() and word.islower()):
        return []
    stem = _stemmer().stemWord(word)
    prefix = os.path.commonprefix([word, stem])
    if len(prefix) < SHORTEST_PREFIX:
        return []
    found: set[str] = set()
    for part in lookup.parts:
        words = part.words
        first = bisect.bisect_left(words, prefix, lo=part.token_count, key=_text)
        last = bisect.bisect_left(words, prefix + "\U0010ffff", lo=first, key=_text)
        candidates = words[first : min(last, first + MOST_CANDIDATES)].to_pylist()
        stems = _stemmer().stemWords(candidates)
        found.update(candidate for candidate, own in zip(candidates, stems) if own == stem and candidate != word)
    return sorted(found, key=lambda form: (len(form), form))[:MOST_FORMS]


def with_other_forms(lookup: KeywordLookup, keywords: Sequence[str], most: int) -> list[str]:
    """The keywords, each followed by its other forms (`forms: true`): a one-word keyword's word
    forms, and any keyword's identifiers (identifiers.py), at most `most` in all."""
    expanded = list(keywords)
    for keyword, words in zip(keywords, _words(keywords)):
        forms = other_forms(lookup, words[0]) if len(words) == 1 else []
        expanded += [form for form in [*forms, *identifiers_holding(lookup, keyword)] if form not in expanded]
    return expanded[:most]


def forms_note(snapshot: SearchedIndex, findings: KeywordFindings, scope: np.ndarray | None) -> str:
    """For each keyword that matches few chunks: the other forms of its word that match some, or,
    for a keyword of several words, how many chunks each word matches alone; and, where it matches
    some, the identifiers holding its words (where it matches none, they match in its place:
    identifiers.stand_ins). Empty where none."""
    notes = []
    for keyword, words, count in zip(findings.keywords, _words(findings.keywords), findings.per_keyword):
        if count.at_most > FEW_CHUNKS or not words:
            continue
        if len(words) == 1:
            counted = _counts(snapshot, other_forms(snapshot.keywords, words[0]), scope)
            if counted:
                notes.append(f"{keyword!r} also as {listed_counts(counted)}")
        else:
            counted = _counts(snapshot, list(dict.fromkeys(words)), scope)
            if any(c.at_least > count.at_most for _, c in counted):
                notes.append(f"the words of {keyword!r} alone: {listed_counts(counted)}")
        held = _counts(snapshot, identifiers_holding(snapshot.keywords, keyword), scope) if count.at_most else []
        if held:
            notes.append(f"{keyword!r} also inside identifiers {listed_counts(held)}")
    if not notes:
        return ""
    return f" Chunks matched by other words: {'; '.join(notes)} (forms: true also matches a keyword's other forms)."


def _counts(snapshot: SearchedIndex, words: list[str], scope: np.ndarray | None) -> list[tuple[str, ChunkCount]]:
    """Each word that matches some chunk, with its count, as keyword_search counts it."""
    if not words:
        return []
    found = keyword_search(snapshot, words, 1, scope=scope)
    return [(word, count) for word, count in zip(found.keywords, found.per_keyword) if count.at_most]


def _words(keywords: Sequence[str]) -> list[list[str]]:
    return words_of([keyword.lower() for keyword in keywords])


def _text(value) -> str:  # noqa: ANN001 - a pyarrow string scalar
    return value.as_py()
