"""A model of no semantic quality, for tests and smoke checks where the model is not the point.

`--model hashed-words-64` embeds a text as its words and their character trigrams, each hashed
(CRC-32, the same in every process) to one of 64 signed dimensions: texts that share words get
close vectors, and nothing else is understood (no synonyms, no languages, no meaning). It needs no
files, no engine and no download, and embeds at once, so a test of keyword search, change
detection, readers or the tools builds a real index without paying for a transformer. An index of
it carries no encoder folder: its server makes the same vectors from the model's name alone.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import regex

HASHED_DIMENSION = 64
HASHED_WINDOW = 256
"""Tokens a text is embedded by, the rest cut off, as all-MiniLM-L6-v2's window: sentences are cut
and embedded with their context as the default model's are."""
WORD_PIECE = 8
"""Letters one token holds at most: a long word counts as several, as a subword tokenizer counts it."""

TOKEN = regex.compile(
    r"[\p{Han}\p{Hiragana}\p{Katakana}]|[^\W\p{Han}\p{Hiragana}\p{Katakana}]{1,%d}|[^\w\s]" % WORD_PIECE
)
"""A token: one character of a script written without spaces, a piece of a word, or one mark."""
WORD = regex.compile(r"\w+")


class HashedWordsEncoder:
    """The Encoder protocol (encoder.py) over hashed words: deterministic, file-free, instant."""

    @property
    def dimension(self) -> int:
        return HASHED_DIMENSION

    @property
    def max_tokens(self) -> int:
        return HASHED_WINDOW

    def prompt(self, kind: str) -> str:
        return ""

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [sum(1 for _ in TOKEN.finditer(text)) for text in texts]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in TOKEN.finditer(text)]

    def encode(self, texts: Sequence[str], prompt: str, batch_size: int = 32) -> np.ndarray:
        """L2-normalised float32 vectors: the sum of the features of each word in the window; a text
        without words gets the features of the empty word, so that every vector has a length."""
        vectors = np.zeros((len(texts), HASHED_DIMENSION), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(_window(prompt + text).casefold()) or [""]:
                vectors[row] += _word_vector(word)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _window(text: str) -> str:
    """`text` up to the end of its HASHED_WINDOW-th token."""
    for count, token in enumerate(TOKEN.finditer(text), 1):
        if count == HASHED_WINDOW:
            return text[: token.end()]
    return text


@lru_cache(maxsize=1 << 16)
def _word_vector(word: str) -> np.ndarray:
    """A word's own feature plus its trigrams' (of the word between `<` and `>`), the two parts
    weighing alike: a form of the word that shares most of its trigrams comes near it, not onto it."""
    vector = np.zeros(HASHED_DIMENSION, dtype=np.float32)
    _add(vector, f"w:{word}", 1.0)
    marked = f"<{word}>"
    trigrams = [marked[at : at + 3] for at in range(len(marked) - 2)]
    for trigram in trigrams:
        _add(vector, f"c:{trigram}", len(trigrams) ** -0.5)
    vector.flags.writeable = False  # shared by every text the word is in
    return vector


def _add(vector: np.ndarray, feature: str, weight: float) -> None:
    """Add `weight` to the signed dimension `feature` hashes to."""
    hashed = zlib.crc32(feature.encode())
    vector[hashed % HASHED_DIMENSION] += weight if hashed >> 31 else -weight
