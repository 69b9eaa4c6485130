"""What a search result shows of its chunk, as plain functions.

A short chunk, or one whose matched sentences leave little out, is shown whole. Otherwise the
result shows its matched sentences, each with the sentence before where it opens with a pronoun
(whose name is there); a long sentence (an infobox row, a table flattened into one line) is cut to
the text around the keywords it matched, or to its start, never inside a date or number. The
sentences a conversation was already sent are left out and counted; what remains is bounded. Nothing here
knows about MCP: conversations.py records what was sent. bench/snippets.py measures the shared
sets' chunks and what snippets leave out of them, which the thresholds below come from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import regex
from arag_mcp.indexer.file_types import LINE_LAID_TYPES
from arag_mcp.indexer.index.keywords import MarkedKeyword, compared_form, fold, with_and, word_matches, words_of

if TYPE_CHECKING:
    from arag_mcp.indexer.index.chunks import Chunk

MAX_SNIPPET_CHARS = 1200
LONG_SENTENCE_CHARS = 300
"""A matched sentence longer than this is cut: around its keywords, or to its first this many."""
CONTEXT_CHARS = 60
"""Characters kept on each side of a keyword occurrence in a long sentence."""
CUT = "…"
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}_]+|&")
"""A word, or "&", which word matching reads as "and"."""

_LINE_BREAK = regex.compile(r"[ \t]*\n\s*")
SNIPPET_SEPARATOR = " ... "
"""Between the sentences of one snippet, where text between them is left out."""

WHOLE_CHUNK_SENTENCES = 8
"""A chunk of at most this many sentences (and WHOLE_CHUNK_CHARS) is shown whole: about nine in ten
of the QA sets' results on MuSiQue, two in three on 2Wiki (bench/README.md, short-chunk bounds).
Sent whole, it costs little more than its matched sentences, and saves a host the read that a
fragment asks for."""
WHOLE_CHUNK_CHARS = 1000
LEFT_OUT_CHARS = 150
"""A chunk is shown whole where its snippet would leave out at most this many characters: about one
sentence, the shared sets' median sentence being 87-155 characters."""
PRONOUNS = frozenset("he she it they his her its their this these those him them".split())
"""Words that, near a sentence's start, point to a name in the sentence before."""
OPENING_WORDS = 4
"""How far into a sentence a pronoun counts as opening it ("In May 1990 he repeated ...")."""
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_FACT = regex.compile(
    rf"\b(?:{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{1,4}})?|{_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?(?!\d)"
    rf"|{_MONTH}\s+\d{{4}}|\d[\d,.:/-]*\d(?:\s+(?:million|billion|trillion|thousand|hundred|per\s?cent|%))?"
    r"|\d(?:\s+(?:million|billion|trillion|thousand|hundred|per\s?cent|%))?)\b",
    regex.I,
)
"""A date ("11 March 1990", "March 11, 1990", "May 1990") or a number with its scale ("2.5 million"):
a cut never falls inside one."""


@dataclass(frozen=True)
class Excerpt:
    """What a result would show of its chunk to a conversation that has none of it."""

    sentences: list[str]
    """The sentences shown, in document order, long ones cut."""
    whole: bool
    """They are every sentence of the chunk, unshortened."""
    chunk_sentences: int
    """How many sentences the chunk has."""
    shortened: bool = False
    """A long sentence among them was cut (around its keywords, or to its start)."""
    lines: bool = False
    """The chunk is laid out in lines (code): its sentences keep their line breaks."""


@dataclass(frozen=True)
class Snippet:
    """What one result shows of its chunk to one conversation."""

    shown: list[str]
    """The excerpt's sentences sent now, in order; empty when every one was sent before."""
    more: int
    """New sentences held back by the size bound."""
    already_sent: int
    """Sentences left out because this conversation was already sent them."""
    whole: bool
    """The conversation now has every sentence of the chunk, unshortened."""
    chunk_sentences: int
    """How many sentences the chunk has."""
    shortened: bool = False
    """A sentence shown is a long one cut short."""
    lines: bool = False
    """The chunk is laid out in lines (code): a whole chunk's sentences are joined by line breaks."""

    @property
    def nothing_new(self) -> bool:
        """Every sentence was sent before: the result is given as a reference."""
        return bool(self.already_sent) and not self.shown and not self.more

    @property
    def sentences(self) -> list[str]:
        """The sentences shown, then how many more matched, as results list them."""
        more = [f"(+{self.more} more matching sentences: read the chunk)"] if self.more else []
        return self.shown + more

    @property
    def extent(self) -> str | None:
        """How much of its chunk a partial snippet shows: "2 of 7 sentences"; None when whole."""
        if self.whole or not self.shown:
            return None
        count = (
            f"{len(self.shown)} of {self.chunk_sentences} {'sentence' if self.chunk_sentences == 1 else 'sentences'}"
        )
        return f"{count}, cut" if self.shortened else count


def excerpt(
    sentences: Sequence[str], matched: Sequence[str], cut: Callable[[str], str], lines: bool = False
) -> Excerpt:
    """The chunk whole where it is short (WHOLE_CHUNK_SENTENCES, WHOLE_CHUNK_CHARS) or its snippet
    would leave out at most LEFT_OUT_CHARS; otherwise its `matched` sentences (texts of its
    `sentences`) as `cut` shortens them, each with the sentence before where it opens with a pronoun.
    `lines`: the chunk is laid out in lines (code), which are kept."""
    if not lines:
        sentences = [_one_line(sentence) for sentence in sentences]
        matched = [_one_line(sentence) for sentence in matched]
    whole = Excerpt(sentences, True, len(sentences), lines=lines)
    size = sum(map(len, sentences))
    if len(sentences) <= WHOLE_CHUNK_SENTENCES and size <= WHOLE_CHUNK_CHARS:
        return whole
    positions = _positions(sentences, matched)
    chosen = sorted(set(positions) | {at - 1 for at in positions if at > 0 and opens_with_pronoun(sentences[at])})
    shown = [cut(sentences[at]) for at in chosen]
    if size - sum(map(len, shown)) <= LEFT_OUT_CHARS:
        return whole
    shortened = any(sentence != sentences[at] for sentence, at in zip(shown, chosen))
    return Excerpt(shown, False, len(sentences), shortened, lines)


def chunk_excerpt(chunk: Chunk, matched: list[str], cut: Callable[[str], str]) -> Excerpt:
    """What a result shows of `chunk` (`excerpt`); where it is code, each sentence with the indent of
    its first line, its lines kept."""
    if chunk.file_type not in LINE_LAID_TYPES:
        return excerpt(chunk.sentences, matched, cut)
    text = chunk.text
    indented = {text[start:end]: text[text.rfind("\n", 0, start) + 1 : end] for start, end in chunk.sentence_spans}
    sentences = [indented[sentence] for sentence in chunk.sentences]
    return excerpt(sentences, [indented.get(sentence, sentence) for sentence in matched], cut, lines=True)


def _one_line(sentence: str) -> str:
    """A sentence as a snippet shows it: a line break inside it (hard-wrapped text) is a space, so
    that it reads as one line under its result, not from column 0; chunk_read keeps the layout."""
    return _LINE_BREAK.sub(" ", sentence) if "\n" in sentence else sentence


def opens_with_pronoun(sentence: str) -> bool:
    """Whether one of the sentence's first OPENING_WORDS words is one of PRONOUNS."""
    return any(word.group().lower() in PRONOUNS for word in list(_WORD.finditer(sentence))[:OPENING_WORDS])


def _positions(sentences: Sequence[str], matched: Sequence[str]) -> list[int]:
    """Where each matched sentence is among the chunk's (a text that occurs twice: each once)."""
    positions: list[int] = []
    for text in matched:
        at = sentences.index(text)
        while at in positions:
            at = sentences.index(text, at + 1)
        positions.append(at)
    return positions


def keyword_spans(sentence: str, keywords: Sequence[str], match: str) -> list[tuple[int, int]]:
    """Where the keywords occur in `sentence`, as keyword matching finds them: whole words after
    folding ("word"; a word of a script written without spaces also inside a longer one; a marked
    keyword as written, or by its words where folding moved the sentence's characters) or
    case-insensitive substrings ("substring")."""
    if match == "substring":
        return [found.span() for k in keywords for found in regex.finditer(regex.escape(k), sentence, regex.I)]
    found = list(_WORD.finditer(sentence))
    words = [fold(with_and(word.group().lower()).strip()) for word in found]
    spans = []
    by_words = []
    for keyword in keywords:
        marked = MarkedKeyword.of(keyword)
        compared = compared_form(sentence, marked.capitals) if marked else ""
        if marked and len(compared) == len(sentence):  # positions there are positions in the sentence
            spans += [occurrence.span() for occurrence in marked.pattern.finditer(compared, overlapped=True)]
        else:
            by_words.append(keyword)
    for pieces in words_of([keyword.lower() for keyword in by_words]):
        wanted = [fold(piece) for piece in pieces]
        spans += [(found[at].start(), found[at + len(wanted) - 1].end()) for at in word_matches(words, wanted)]
    return spans


def around(sentence: str, spans: Sequence[tuple[int, int]]) -> str:
    """A long sentence cut to CONTEXT_CHARS either side of its first occurrences (merged where they
    overlap, about LONG_SENTENCE_CHARS in all), with CUT where text was left out; without
    occurrences, its start."""
    if len(sentence) <= LONG_SENTENCE_CHARS:
        return sentence
    if not spans:
        return leading(sentence)
    windows: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        low = max(0, start - CONTEXT_CHARS)
        high = min(len(sentence), end + CONTEXT_CHARS, low + LONG_SENTENCE_CHARS)
        if windows and low <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], high))
        elif windows and sum(b - a for a, b in windows) + high - low > LONG_SENTENCE_CHARS:
            break
        else:
            windows.append((low, high))
    facts = _fact_spans(sentence)
    cuts = [_outside(facts, _word_start(sentence, low), _word_end(sentence, high)) for low, high in windows]
    parts = [sentence[low:high].strip() for low, high in cuts]
    before = f"{CUT} " if cuts[0][0] > 0 else ""
    after = f" {CUT}" if cuts[-1][1] < len(sentence) else ""
    return before + f" {CUT} ".join(parts) + after


def leading(sentence: str) -> str:
    """A long sentence's first LONG_SENTENCE_CHARS characters, ended at a word's end, then CUT."""
    if len(sentence) <= LONG_SENTENCE_CHARS:
        return sentence
    _, end = _outside(_fact_spans(sentence), 0, _word_end(sentence, LONG_SENTENCE_CHARS))
    return sentence[:end].rstrip() + (f" {CUT}" if end < len(sentence) else "")


def _fact_spans(sentence: str) -> list[tuple[int, int]]:
    return [found.span() for found in _FACT.finditer(sentence)]


def _outside(facts: list[tuple[int, int]], low: int, high: int) -> tuple[int, int]:
    """(low, high) widened so that neither falls inside a date or number."""
    for start, end in facts:
        if start < low < end:
            low = start
        if start < high < end:
            high = end
    return low, high


def _word_start(sentence: str, at: int) -> int:
    """`at`, moved past a word it cuts in half (when the word is short)."""
    if at == 0 or sentence[at - 1].isspace():
        return at
    space = sentence.find(" ", at, at + CONTEXT_CHARS // 4)
    return at if space < 0 else space + 1


def _word_end(sentence: str, at: int) -> int:
    """`at`, moved back to the end of a word it cuts in half (when the word is short)."""
    if at >= len(sentence) or sentence[at].isspace():
        return at
    space = sentence.rfind(" ", at - CONTEXT_CHARS // 4, at)
    return at if space < 0 else space


def keyword_cut(keywords: Sequence[str], match: str) -> Callable[[str], str]:
    """How keyword results shorten a long sentence: around the keywords it holds."""

    def cut(sentence: str) -> str:
        if len(sentence) <= LONG_SENTENCE_CHARS:
            return sentence
        return around(sentence, keyword_spans(sentence, keywords, match))

    return cut


def sentence_key(sentence: str) -> int:
    """What a conversation remembers of an excerpt's sentence it was sent (beside its chunk id): a
    hash, not the text."""
    return hash(sentence)


def snippet(shown: Excerpt, sent: set[int], limit: int = MAX_SNIPPET_CHARS) -> Snippet:
    """The excerpt's sentences whose key is not in `sent`, the leading ones within `limit`
    characters (at least one). A whole excerpt, once all its sentences are shown or sent before,
    gives the conversation the whole chunk."""
    new = [sentence for sentence in shown.sentences if sentence_key(sentence) not in sent]
    kept: list[str] = []
    size = 0
    for sentence in new:
        if kept and size + len(sentence) > limit:
            break
        kept.append(sentence)
        size += len(sentence)
    more = len(new) - len(kept)
    shortened = shown.shortened and any(sentence.startswith(CUT) or sentence.endswith(CUT) for sentence in kept)
    whole = shown.whole and not more
    return Snippet(kept, more, len(shown.sentences) - len(new), whole, shown.chunk_sentences, shortened, shown.lines)
