"""Words as matching sees them: the rule that cuts text into words, `fold` (case, accents and
width removed), scripts written without spaces, and where a keyword's words match a run of words.

Plain Python, shared by the keyword index (terms.py, which applies the same rule in Arrow), the
server's keyword counting and its snippets.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import regex

from ...normal_forms import normalized

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


TOKEN_BREAK = "[\t\n\v\f\r\u0085\\p{Z}]+"
"""Pattern between the tokens of a text (whitespace, in RE2 and `regex` alike)."""
OPENING_MARKS = "([{<\"'“‘«"
"""Stripped from a token's start: brackets and quotes around a term are not part of it."""
CLOSING_MARKS = ")]}>\"'”’».,;:!?"
"""Stripped from a token's end: brackets, quotes and the punctuation that ends a clause."""
MARKED_TOKEN = r"[\pL\pN].*[^\pL\pM\pN_]|[^\pL\pM\pN_].*[\pL\pN]|^[^\p{Ll}]*\p{Lu}[^\p{Ll}]*\p{Lu}[^\p{Ll}]*$"
"""A token (stripped of its marks) whose spelling matters to matching: one that holds a letter or
digit and punctuation ("--table", "C++", "pg_hba.conf", "T-ALL"), or one written in capitals, two or
more, with no small letter ("ALL", "IT"). Such tokens are indexed as written beside the words
(terms.py). The same pattern parses in `regex` and in RE2 (Arrow)."""
_MARKED_TOKEN = regex.compile(MARKED_TOKEN)
_TOKEN_BREAK = regex.compile(TOKEN_BREAK)
_SAME_MARKS = str.maketrans(
    {**dict.fromkeys("‐‑‒–—―−﹣－", "-"), **dict.fromkeys("’‘ʼ′`´", "'"), **dict.fromkeys("“”„″", '"')}
)
"""Dashes, apostrophes and quotes that typesetting varies, as the ASCII mark they stand for."""
_WORD_CHARACTER = regex.compile(r"[\p{L}\p{M}\p{N}_]")
_CAPITALS = regex.compile(r"^[^\p{Ll}]*\p{Lu}[^\p{Ll}]*\p{Lu}[^\p{Ll}]*$")
_LETTER_OR_DIGIT = regex.compile(r"[\p{L}\p{N}]")


def token_core(token: str) -> str:
    """A token without the brackets, quotes and clause punctuation around it."""
    return token.lstrip(OPENING_MARKS).rstrip(CLOSING_MARKS)


def marked_tokens(text: str) -> list[str]:
    """The tokens of `text` whose spelling matters to matching (MARKED_TOKEN), stripped, as written."""
    cores = (token_core(token) for token in _TOKEN_BREAK.split(text))
    return [core for core in cores if core and _MARKED_TOKEN.search(core)]


def in_capitals(text: str) -> bool:
    """Whether `text` is written in capitals: two or more capital letters and no small one ("ALL", "T-ALL")."""
    return _CAPITALS.match(text) is not None


@dataclass(frozen=True)
class MarkedKeyword:
    """A keyword of one token whose punctuation or capitals matter ("--table", "C++", "ALL"): it
    matches inside a token where the token has it as written, its ends on word boundaries (where
    they are letters or digits). Case is ignored unless the keyword is in capitals; dashes,
    apostrophes and quotes of any kind are alike; compatibility forms (width) are unified, and, for
    a keyword not in capitals, accents removed as `fold` removes them."""

    core: str
    """The keyword stripped of its marks, as it is compared (`compared_form`)."""
    capitals: bool

    @classmethod
    def of(cls, keyword: str) -> MarkedKeyword | None:
        """The marked form of a keyword, or None for a keyword of several tokens or whose spelling
        does not matter (plain words, matched as words)."""
        core = token_core(keyword.strip())
        if not core or _TOKEN_BREAK.search(core) or not _MARKED_TOKEN.search(core):
            return None
        capitals = in_capitals(core)
        return cls(compared_form(core, capitals), capitals)

    @cached_property
    def pattern(self) -> regex.Pattern:
        """Its occurrences in a text in `compared_form`; compiled when first needed (most keywords
        are held by no token, and need none)."""
        before = "(?<![\\p{L}\\p{M}\\p{N}_])" if _bounded(self.core[0]) else ""
        after = "(?![\\p{L}\\p{M}\\p{N}_])" if _bounded(self.core[-1]) else ""
        return regex.compile(before + regex.escape(self.core) + after)

    def count_in(self, token: str) -> int:
        """How often the keyword occurs in a token (as written in the text)."""
        return len(self.pattern.findall(compared_form(token, self.capitals), overlapped=True))

    def count_in_text(self, text: str) -> int:
        return sum(self.count_in(token) for token in marked_tokens(text))


def compared_form(text: str, capitals: bool) -> str:
    """A token as a marked keyword compares it: `fold`ed, or, for a keyword in capitals, with only
    compatibility forms unified (case kept); typeset dashes, apostrophes and quotes as ASCII."""
    form = normalized("NFKC", text) if capitals else fold(text)
    return form.translate(_SAME_MARKS)


def _bounded(character: str) -> bool:
    """Whether a keyword's end must fall on a word boundary: where it is a letter or digit of a
    script written with spaces."""
    return _LETTER_OR_DIGIT.match(character) is not None and not _UNSPACED.match(character)
