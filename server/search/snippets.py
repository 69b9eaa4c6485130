"""What a search result shows of its chunk's matched sentences, as plain functions.

A long sentence (an infobox row, a table flattened into one line) is cut to the text around the
keywords it matched, or to its start; the pieces a conversation was already sent are left out and
counted; what remains is bounded. Nothing here knows about MCP: conversations.py records what was
sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex
from arag_mcp.indexer.index.words import fold, with_and, word_matches, words_of

MAX_SNIPPET_CHARS = 1200
LONG_SENTENCE_CHARS = 300
"""A matched sentence longer than this is cut: around its keywords, or to its first this many."""
CONTEXT_CHARS = 60
"""Characters kept on each side of a keyword occurrence in a long sentence."""
CUT = "…"
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}_]+|&")
"""A word, or "&", which word matching reads as "and"."""

SNIPPET_SEPARATOR = " ... "
"""Between the sentences of one snippet, where text between them is left out."""


@dataclass(frozen=True)
class Snippet:
    """What one result shows of its matched sentences to one conversation."""

    shown: list[str]
    """The pieces sent now, in order; empty when every matched piece was sent before."""
    more: int
    """New pieces held back by the size bound."""
    already_sent: int
    """Matched pieces left out because this conversation was already sent them."""
    whole: bool
    """The conversation now has every sentence of the chunk, unshortened."""

    @property
    def nothing_new(self) -> bool:
        """Every matched piece was sent before: the result is given as a reference."""
        return bool(self.already_sent) and not self.shown and not self.more

    @property
    def sentences(self) -> list[str]:
        """The pieces shown, then how many more matched, as results list them."""
        more = [f"(+{self.more} more matching sentences: read the chunk)"] if self.more else []
        return self.shown + more


def keyword_spans(sentence: str, keywords: Sequence[str], match: str) -> list[tuple[int, int]]:
    """Where the keywords occur in `sentence`, as keyword matching finds them: whole words after
    folding ("word"; a word of a script written without spaces also inside a longer one) or
    case-insensitive substrings ("substring")."""
    if match == "substring":
        return [found.span() for k in keywords for found in regex.finditer(regex.escape(k), sentence, regex.I)]
    found = list(_WORD.finditer(sentence))
    words = [fold(with_and(word.group().lower()).strip()) for word in found]
    spans = []
    for pieces in words_of([keyword.lower() for keyword in keywords]):
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
    parts = [sentence[_word_start(sentence, low) : _word_end(sentence, high)].strip() for low, high in windows]
    before = f"{CUT} " if windows[0][0] > 0 else ""
    after = f" {CUT}" if windows[-1][1] < len(sentence) else ""
    return before + f" {CUT} ".join(parts) + after


def leading(sentence: str) -> str:
    """A long sentence's first LONG_SENTENCE_CHARS characters, ended at a word's end, then CUT."""
    if len(sentence) <= LONG_SENTENCE_CHARS:
        return sentence
    return sentence[: _word_end(sentence, LONG_SENTENCE_CHARS)].rstrip() + f" {CUT}"


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


def keyword_pieces(sentences: list[str], keywords: Sequence[str], match: str) -> list[str]:
    """Matched sentences as keyword results show them: long ones cut around the keywords."""
    return [around(sentence, keyword_spans(sentence, keywords, match)) for sentence in sentences]


def semantic_pieces(sentences: list[str]) -> list[str]:
    """Matched sentences as semantic results show them: long ones cut to their start."""
    return [leading(sentence) for sentence in sentences]


def piece_key(piece: str) -> int:
    """What a conversation remembers of a piece it was sent (beside its chunk id): a hash, not the text."""
    return hash(piece)


def snippet(pieces: list[str], sent: set[int], covers_chunk: bool, limit: int = MAX_SNIPPET_CHARS) -> Snippet:
    """The pieces whose key is not in `sent`, the leading ones within `limit` characters (at least
    one). `covers_chunk`: the pieces are every sentence of the chunk, unshortened, so once all are
    shown or sent before, the conversation has the whole chunk."""
    new = [piece for piece in pieces if piece_key(piece) not in sent]
    shown: list[str] = []
    size = 0
    for piece in new:
        if shown and size + len(piece) > limit:
            break
        shown.append(piece)
        size += len(piece)
    more = len(new) - len(shown)
    return Snippet(shown, more, len(pieces) - len(new), covers_chunk and not more)
