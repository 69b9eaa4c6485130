"""Cut a document into token-bounded chunks on sentence boundaries."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass

from .sentences import cut_span, split_sentences

TokenOffsets = Callable[[str], list[tuple[int, int]]]
"""Character spans of the tokens of a text, under the embedding model's tokenizer."""

CHARS_PER_TOKEN_BOUND = 16
"""A sentence longer than this many characters per allowed token is cut by characters before it is
tokenized, so that one overlong line (a minified file, a table dump) never goes to the tokenizer
whole; the pieces are then cut by tokens as any long sentence is. A chunk holds at most this many
characters per token of its size: a run of letters the tokenizer reads as one unknown token must
not make a chunk of megabytes."""
COUNT_BATCH = 1024
"""Sentences tokenized at a time: a long document's token lists are never all in memory."""


@dataclass(frozen=True)
class Span:
    """A piece of a document: character offsets and its token count."""

    start: int
    end: int
    tokens: int


def sentence_spans(
    text: str,
    count_tokens: Callable[[Sequence[str]], list[int]],
    token_offsets: TokenOffsets,
    max_tokens: int,
    given: Sequence[tuple[int, int]] = (),
) -> list[Span]:
    """The document's sentences as spans: `given` (a reader's own, such as lines of code), else cut
    by the prose rules; a sentence over `max_tokens` is cut hard into pieces."""
    max_chars = max_tokens * CHARS_PER_TOKEN_BOUND
    found = given or split_sentences(text)
    bounds = [piece for start, end in found for piece in cut_span(text, start, end, max_chars)]
    spans: list[Span] = []
    for first in range(0, len(bounds), COUNT_BATCH):
        batch = bounds[first : first + COUNT_BATCH]
        for (start, end), tokens in zip(batch, count_tokens([text[start:end] for start, end in batch])):
            if tokens <= max_tokens:
                spans.append(Span(start, end, tokens))
            else:
                spans.extend(_split_hard(text, start, end, token_offsets, max_tokens))
    return spans


def _split_hard(text: str, start: int, end: int, token_offsets: TokenOffsets, max_tokens: int) -> list[Span]:
    """Cut text[start:end] into pieces of at most `max_tokens` tokens, between words where possible."""
    piece = text[start:end]
    offsets = token_offsets(piece)
    pieces = []
    first = 0
    while first < len(offsets):
        cut = min(first + max_tokens, len(offsets))
        if cut < len(offsets):
            word_starts = [i for i in range(first + 1, cut + 1) if piece[offsets[i][0] - 1].isspace()]
            cut = word_starts[-1] if word_starts else cut
        piece_end = offsets[cut][0] if cut < len(offsets) else len(piece)
        while piece_end > offsets[first][0] and piece[piece_end - 1].isspace():
            piece_end -= 1
        pieces.append(Span(start + offsets[first][0], start + piece_end, cut - first))
        first = cut
    return pieces


def pack_chunks(
    sentences: Sequence[Span], chunk_tokens: int, section_starts: Set[int] = frozenset()
) -> list[list[Span]]:
    """Group consecutive sentences greedily into chunks of at most `chunk_tokens` tokens. A chunk
    at least half full also ends before a sentence that starts a major section (one of the
    offsets `section_starts`), so that chunks follow sections without becoming tiny. A chunk also
    ends before it would span more than `chunk_tokens` × CHARS_PER_TOKEN_BOUND characters."""
    max_chars = chunk_tokens * CHARS_PER_TOKEN_BOUND
    chunks: list[list[Span]] = []
    current: list[Span] = []
    size = 0
    for sentence in sentences:
        section_break = sentence.start in section_starts and size * 2 >= chunk_tokens
        too_long = bool(current) and sentence.end - current[0].start > max_chars
        if current and (size + sentence.tokens > chunk_tokens or section_break or too_long):
            chunks.append(current)
            current, size = [], 0
        current.append(sentence)
        size += sentence.tokens
    if current:
        chunks.append(current)
    return chunks
