"""Identifiers that hold a keyword's words as their parts: "zephyr ratio" is written in code as
`compute_zephyr_ratio` or `computeZephyrRatio`, one word to keyword matching (words.py keeps `_`
inside a word and folds case), so the phrase finds no chunk where the code says it.

Identifiers match as written, which keeps their rank exact. Where a keyword matches no chunk as
written, the identifiers of the index's vocabulary that hold its words as parts match in its place;
where it matches few, they are named with their counts (word_forms.py says so). Parts are found in
the folded vocabulary: between underscores (`compute_zephyr_ratio`), and, for a keyword of several
words, also run together (`computezephyrratio`, a folded `computeZephyrRatio`); a one-word
keyword run into a longer word cannot be told from a word that merely contains it ("ratio" in
"gratio"), so it is found between underscores only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow.compute as pc

from .words import words_of

if TYPE_CHECKING:
    from .lookup import KeywordLookup
    from .search import ChunkCount, KeywordFindings

MOST_IDENTIFIERS = 5
"""Identifiers named (or matched) per keyword."""
SHORTEST_RUN = 6
"""Letters a keyword's words run together must have at the least to be looked for inside words."""


def identifiers_holding(lookup: KeywordLookup, keyword: str) -> list[str]:
    """The vocabulary's identifiers (folded) that hold the keyword's words as parts, other than the
    keyword's own word, shortest first; none for a keyword with a word that is not ASCII letters
    and digits."""
    [words] = words_of([keyword.lower()])
    if not words or not all(word.isascii() and word.isalnum() for word in words):
        return []
    snake = "_".join(words)  # ASCII letters, digits and underscores: nothing to escape
    patterns = [f"(?:^|_){snake}(?:_|$)"]
    run = "".join(words)
    if len(words) > 1 and len(run) >= SHORTEST_RUN:
        patterns.append(run)
    pattern = "|".join(patterns)
    own = words[0] if len(words) == 1 else None
    found: set[str] = set()
    for part in lookup.parts:
        words_held = part.words[part.token_count :]
        holders = pc.filter(words_held, pc.match_substring_regex(words_held, pattern=pattern))
        found.update(word for word in holders.to_pylist() if word != own)
    return sorted(found, key=lambda word: (len(word), word))[:MOST_IDENTIFIERS]


def stand_ins(lookup: KeywordLookup, keywords: Sequence[str], counts: Sequence[ChunkCount]) -> dict[str, list[str]]:
    """For each keyword that matches no chunk as written, the identifiers that match in its place."""
    found = {
        keyword: identifiers_holding(lookup, keyword) for keyword, count in zip(keywords, counts) if not count.at_most
    }
    return {keyword: identifiers for keyword, identifiers in found.items() if identifiers}


def with_stand_ins(keywords: Sequence[str], standing: Mapping[str, list[str]], most: int) -> list[str]:
    """The keywords, then the identifiers standing in for those that match nothing, at most `most` in all."""
    expanded = list(keywords)
    expanded += [word for identifiers in standing.values() for word in identifiers if word not in expanded]
    return expanded[:most]


def stand_ins_note(standing: Mapping[str, list[str]], findings: KeywordFindings) -> str:
    """What matched in place of the keywords that match nothing as written, with counts."""
    counts = dict(zip(findings.keywords, findings.per_keyword))
    notes = [
        f"{keyword!r} matches no chunk as written; identifiers holding its words matched instead: "
        + listed_counts([(word, counts[word]) for word in identifiers if word in counts])
        for keyword, identifiers in standing.items()
    ]
    return "".join(f" {note}." for note in notes)


def listed_counts(counted: Sequence[tuple[str, ChunkCount]]) -> str:
    """ "'chartered' (12), 'charters' (2)": words with the chunks each matches (a count not settled
    as its range), as the notes on other words name them (here and word_forms.py)."""
    return ", ".join(f"{word!r} ({count})" for word, count in counted)
