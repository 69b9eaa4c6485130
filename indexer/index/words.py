"""Words as matching sees them: the rule that cuts text into words, `fold` (case, accents and
width removed), scripts written without spaces, and where a keyword's words match a run of words.

Plain Python, shared by the keyword index (terms.py, which applies the same rule in Arrow), the
server's keyword counting and its snippets.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

import regex

from ..normal_forms import normalized

KeywordMatch = Literal["word", "substring"]
"""What a keyword match is: whole words compared after `fold` (the default), or the A-RAG paper's
case-insensitive substrings of a chunk's text."""
KEYWORD_MATCHES: tuple[KeywordMatch, ...] = ("word", "substring")

WORD_BREAK = r"[^\pL\pM\pN_]+"
"""RE2 pattern between words (Arrow's regex engine, used for texts and keywords alike). Combining
marks belong to the word they are on: a Devanagari virama or vowel sign, a Thai tone mark or an
accent not composed with its letter does not cut a word in two."""
SHORT_WORD_BREAK = regex.compile(r"[^\p{L}\p{M}\p{N}_]+")
"""The same rule compiled once in Python, for short strings (keywords, sentences): Arrow compiles
its pattern on every call, which costs more than splitting a few sentences."""

UNSPACED_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
"""Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese), and
Korean, whose particles attach to the word before them: a run of their letters is one "word" of a
text, so whole-word matching looks for a keyword's characters inside it. The same class parses in
`regex` and in RE2 (Arrow)."""
INDIC_SCRIPTS = (
    r"\p{Devanagari}\p{Bengali}\p{Gurmukhi}\p{Gujarati}\p{Oriya}\p{Tamil}\p{Telugu}\p{Kannada}"
    r"\p{Malayalam}\p{Sinhala}\p{Tibetan}"
)
"""Scripts whose combining signs (virama, vowel signs, nasalisation) are parts of letters, not accents."""
_UNSPACED = regex.compile(f"[{UNSPACED_SCRIPTS}]")
_MARKS = regex.compile(f"([{UNSPACED_SCRIPTS}{INDIC_SCRIPTS}]?)\\p{{Mn}}+")
"""A run of nonspacing marks, with the letter before it where that is a letter of those scripts, whose
marks are the letters' parts (Thai vowels and tones, the kana voicing marks of が and ぱ, the
Devanagari virama of हिन्दी); any other run is accents. One pass, linear in the text."""


AMPERSAND = "&"
"""Read as the word "and" wherever text is cut into words: "Thelma & Louise" is "Thelma and Louise"."""
AMPERSAND_WORD = " and "


def with_and(lowered: str) -> str:
    """A lower-cased text with each "&" as the word "and", as every word rule here reads text."""
    return lowered.replace(AMPERSAND, AMPERSAND_WORD) if AMPERSAND in lowered else lowered


def fold(word: str) -> str:
    """A word as whole-word matching compares it: compatibility forms unified (NFKC: full-width
    letters, half-width kana, ligatures), case folded, and accents removed."""
    if word.isascii():
        return word.lower()
    decomposed = normalized("NFD", normalized("NFKC", word).casefold())
    return normalized("NFC", _MARKS.sub(_without_accents, decomposed))


def _without_accents(marks: regex.Match[str]) -> str:
    """A run of marks kept on a letter whose parts they are, else removed as accents."""
    return marks[0] if marks[1] else ""


QUALIFIED_TITLE = regex.compile(r"^(.*?\S)\s*\(([^()]*[^()\s][^()]*)\)\s*$")
"""A title that names its subject, then a qualifier in brackets: "Thomas H. Ince (film)"."""


def qualified_subject(title: str) -> str | None:
    """What a title of the form "subject (qualifier)" names, or None for any other title."""
    found = QUALIFIED_TITLE.match(title)
    return found.group(1) if found else None


def unspaced(word: str) -> bool:
    """Whether a keyword's word has letters of UNSPACED_SCRIPTS: it then matches wherever its
    characters occur in a row, inside longer words too ("東京" in "東京の歴史")."""
    return not word.isascii() and _UNSPACED.search(word) is not None


def words_of(lowered: list[str]) -> list[list[str]]:
    """The words of each lower-cased string, by the same rule as chunk texts."""
    return [[word for word in SHORT_WORD_BREAK.split(with_and(text)) if word] for text in lowered]


def word_matches(words: Sequence[str], pieces: Sequence[str]) -> Iterator[int]:
    """The positions where `pieces` (folded) occur as consecutive folded `words`: each piece equal
    to its word, or, a piece of a script written without spaces, held inside it."""
    span = len(pieces)
    if not span:
        return
    first = pieces[0]
    if not any(map(unspaced, pieces)):
        if first not in words:
            return
        wanted = list(pieces)
        yield from (at for at in range(len(words) - span + 1) if words[at] == first and words[at : at + span] == wanted)
        return
    yield from (
        at
        for at in range(len(words) - span + 1)
        if all(piece in word if unspaced(piece) else piece == word for piece, word in zip(pieces, words[at:]))
    )

