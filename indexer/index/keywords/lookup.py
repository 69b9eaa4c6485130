"""Keyword search's side of the index: the vocabulary and title words of every keyword segment held
in memory, the marked tokens of texts and titles in the forms keywords compare them in (made when
first asked for), and the postings read for the words and tokens a search finds.

Each segment has its own sorted vocabulary (segments.py); a lookup asks each one. Terms rows and
vocabulary positions are numbered across segments (a segment's own, plus the rows or words of the
segments before it), so a search holds one array of either, and postings read from a segment are
renumbered into chunk numbers (segment_set.py) as they are read.
"""

from __future__ import annotations

import bisect
import copy
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .segment_set import SegmentSet
from .segments import Postings, Segment
from .terms import MARKED_PREFIX, ascii_in_arrow, folded, lower, marked_tokens_of
from .words import UNSPACED_SCRIPTS, compared_form, unspaced

AFTER_MARKED_PREFIX = chr(ord(MARKED_PREFIX) + 1)
"""Sorts after every term that begins with MARKED_PREFIX and before every word."""

SPELLINGS_KEPT = 4_096
"""Folded words whose spellings are kept (a few hundred bytes each)."""

NO_ROWS = np.zeros(0, dtype=np.int64)

TokenForm = Literal["folded", "capitals", "lowered"]
"""How marked tokens are compared: as words.compared_form makes them (folded, or in capitals with
case kept), or lower-cased as substring matching compares text."""


class SegmentWords:
    """One segment's vocabulary and title words, with the chunk number of each of its local numbers.
    What is derived from the segment alone (folded spellings, words of unspaced scripts) is kept by
    the next build that holds the segment (`renumbered`): a commit adds a segment, it does not
    change the others."""

    def __init__(self, segment: Segment, numbers: np.ndarray, first_row: int, first_word: int) -> None:
        self.segment = segment
        vocabulary = segment.vocabulary
        self.words: pa.Array = vocabulary.words
        """The distinct terms of the segment, sorted: the marked tokens first (`token_count` of them,
        terms.MARKED_PREFIX before each), then the words."""
        self.word_rows, self.word_row_starts, self.rows_per_word = vocabulary.rows, vocabulary.starts, vocabulary.counts
        self.token_count = bisect.bisect_left(self.words, AFTER_MARKED_PREFIX, key=_text)  # the tokens sort first
        other = np.flatnonzero(~pc.string_is_ascii(self.words).to_numpy(zero_copy_only=False))
        other = other[other >= self.token_count]
        other_folded = folded(self.words.take(pa.array(other, pa.int64())))
        self.folded_spellings: dict[str, list[int]] = {}
        """Folded form → positions in `words` of the non-ASCII words that fold to it (an ASCII word,
        stored lower-cased, is its own folded form): whole-word matching looks words up folded."""
        for at, word in zip(other.tolist(), other_folded.to_pylist()):
            self.folded_spellings.setdefault(word, []).append(at)
        unspaced_words = _has_unspaced(other_folded)
        self.unspaced_words = other_folded.filter(pa.array(unspaced_words))
        """The folded forms of the words with letters of a script written without spaces (terms.py)."""
        self.unspaced_positions = other[unspaced_words]
        self.title_words: pa.Array = segment.title_words.words
        """The folded words of every title, sorted."""
        self._unspaced_titles = _has_unspaced(self.title_words)
        self.unspaced_title_words = self.title_words.filter(pa.array(self._unspaced_titles))
        self._number(numbers, first_row, first_word)

    def _number(self, numbers: np.ndarray, first_row: int, first_word: int) -> None:
        self.numbers = numbers
        """Chunk number of each local number (-1: removed)."""
        self.first_row, self.first_word = first_row, first_word
        owners = self.segment.title_words.owners
        self.title_owners = numbers[owners] if len(owners) else NO_ROWS
        """Chunk number of each of `title_words` (-1: removed)."""
        self.unspaced_title_owners = self.title_owners[self._unspaced_titles]

    def renumbered(self, numbers: np.ndarray, first_row: int, first_word: int) -> SegmentWords:
        """These words in another build of the index: what the segment alone gives kept, its chunks
        and its first terms row and vocabulary position as that build numbers them."""
        other = copy.copy(self)
        other._number(numbers, first_row, first_word)
        return other

    @property
    def row_count(self) -> int:
        return len(self.word_rows)

    def rows(self, positions: list[int] | np.ndarray) -> np.ndarray:
        """Terms rows (numbered across segments) of the words at these local positions."""
        starts, lengths = self.word_row_starts, self.rows_per_word
        spans = [self.word_rows[starts[at] : starts[at] + lengths[at]] for at in np.asarray(positions).tolist()]
        return np.concatenate([NO_ROWS, *spans]).astype(np.int64) + self.first_row

    def postings(self, local_rows: np.ndarray) -> Postings:
        """These rows of the segment's terms file, their chunks renumbered, removed ones dropped."""
        read = self.segment.postings.at(local_rows)
        numbers = self.numbers[read.chunks]
        live = numbers >= 0
        if live.all():
            return Postings(read.terms, read.lengths, numbers, read.counts)
        kept = np.concatenate([[0], np.cumsum(live)])
        ends = np.cumsum(read.lengths)
        lengths = kept[ends] - kept[ends - read.lengths]
        return Postings(read.terms, lengths, numbers[live], read.counts[live])

    def spelled(self, folded_word: str) -> list[int]:
        """Local positions of the words whose folded form is `folded_word`."""
        found = list(self.folded_spellings.get(folded_word, ()))
        if folded_word.isascii():
            at = bisect.bisect_left(self.words, folded_word, key=_text)
            if at < len(self.words) and self.words[at].as_py() == folded_word:
                found.append(at)
        return found

    def title_holders(self, folded_word: str) -> np.ndarray:
        first = bisect.bisect_left(self.title_words, folded_word, key=_text)
        last = bisect.bisect_right(self.title_words, folded_word, lo=first, key=_text)
        owners = self.title_owners[first:last]
        return owners[owners >= 0]


@dataclass(frozen=True)
class KeywordLookup:
    """What keyword search keeps in memory: each segment's vocabulary and title words (titles
    count in whole-word matching; they are short, so their postings are derived at build rather
    than stored). Postings name chunks by the catalogue's chunk numbers."""

    parts: list[SegmentWords]
    titles: pa.Array
    """Every chunk's title, by chunk number."""
    chunk_count: int
    title_lengths: np.ndarray
    """How many words each chunk's title has, by chunk number."""
    row_starts: np.ndarray
    """The first terms row of each segment (numbered across segments), then the row count."""
    word_starts: np.ndarray
    """The first vocabulary position of each segment, then the word count."""
    _spellings: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)
    """`spellings` found so far (at most SPELLINGS_KEPT)."""
    _token_forms: dict[tuple[str, TokenForm], pa.Array] = field(default_factory=dict, compare=False, repr=False)
    """The marked tokens of the texts ("texts") and of the titles ("titles") in each form asked for."""

    @classmethod
    def load(cls, segments: SegmentSet, previous: KeywordLookup | None = None) -> KeywordLookup:
        """The lookup of a build's segments; the words of those `previous` (an earlier build's lookup)
        derived from the same opened segments are taken over (segment_set.open_segments)."""
        known = {} if previous is None else {id(part.segment): part for part in previous.parts}
        parts, row, word = [], 0, 0
        for segment, numbers in zip(segments.segments, segments.numbers_of_local):
            earlier = known.get(id(segment))
            part = (
                SegmentWords(segment, numbers, row, word) if earlier is None else earlier.renumbered(numbers, row, word)
            )
            parts.append(part)
            row, word = row + part.row_count, word + len(part.words)
        catalogue = segments.catalogue
        owners = np.concatenate([NO_ROWS, *(part.title_owners for part in parts)])
        return cls(
            parts,
            catalogue.titles,
            len(catalogue),
            np.bincount(owners[owners >= 0], minlength=len(catalogue)),
            np.array([*(part.first_row for part in parts), row], dtype=np.int64),
            np.array([*(part.first_word for part in parts), word], dtype=np.int64),
        )

    def _owner(self, starts: np.ndarray, position: int) -> SegmentWords:
        return self.parts[int(np.searchsorted(starts, position, side="right")) - 1]

    def postings(self, rows: np.ndarray) -> Postings:
        """These terms rows (numbered across segments), flattened."""
        owners = np.searchsorted(self.row_starts, rows, side="right") - 1
        read = [
            part.postings(rows[owners == at] - part.first_row) for at, part in enumerate(self.parts) if at in owners
        ]
        if not read:
            return Postings(pa.array([], pa.string()), NO_ROWS, NO_ROWS, np.zeros(0, dtype=np.int32))
        return Postings.concatenated(read)

    def word_at(self, position: int) -> str:
        """The term at this vocabulary position (numbered across segments)."""
        part = self._owner(self.word_starts, position)
        return part.words[position - part.first_word].as_py()

    def rows_containing(self, piece: str) -> np.ndarray:
        """Terms rows of every word that contains `piece` (lower-cased)."""
        found = []
        for part in self.parts:
            matched = pc.match_substring(part.words, pattern=piece).to_numpy(zero_copy_only=False)
            matched[: part.token_count] = False
            found.append(part.word_rows[np.repeat(matched, part.rows_per_word)].astype(np.int64) + part.first_row)
        return np.concatenate([NO_ROWS, *found])

    def spellings(self, folded_word: str) -> list[int]:
        """Vocabulary positions of the words whose folded form is `folded_word` (found by bisection,
        and kept: a search looks a word up several times)."""
        if folded_word not in self._spellings:
            if len(self._spellings) >= SPELLINGS_KEPT:
                self._spellings.clear()
            self._spellings[folded_word] = [
                part.first_word + at for part in self.parts for at in part.spelled(folded_word)
            ]
        return self._spellings[folded_word]

    def rows_of_word(self, folded_word: str) -> np.ndarray:
        """Terms rows of every word whose folded form is `folded_word`, or, for a word of a script
        written without spaces, holds it."""
        found = []
        for part in self.parts:
            if unspaced(folded_word):
                holding = pc.match_substring(part.unspaced_words, pattern=folded_word).to_numpy(zero_copy_only=False)
                found.append(part.rows(part.unspaced_positions[holding]))
            else:
                found.append(part.rows(part.spelled(folded_word)))
        return np.concatenate([NO_ROWS, *found])

    @cached_property
    def token_positions(self) -> np.ndarray:
        """The vocabulary position of every marked token, in `token_forms` order."""
        return np.concatenate([NO_ROWS, *(part.first_word + np.arange(part.token_count) for part in self.parts)])

    def token_forms(self, form: TokenForm) -> pa.Array:
        """Every marked token in this form (see `_forms`), aligned with `token_positions`; made when
        first asked for."""
        if ("texts", form) not in self._token_forms:
            tokens = [
                pc.utf8_slice_codeunits(part.words.slice(0, part.token_count), len(MARKED_PREFIX))
                for part in self.parts
            ]
            self._token_forms["texts", form] = _forms(pa.concat_arrays([pa.array([], pa.string()), *tokens]), form)
        return self._token_forms["texts", form]

    def rows_of_token(self, position: int) -> np.ndarray:
        """Terms rows of the marked token at this vocabulary position."""
        part = self._owner(self.word_starts, position)
        return part.rows([position - part.first_word])

    @cached_property
    def title_tokens(self) -> tuple[pa.Array, np.ndarray]:
        """The marked tokens of every title, as written, and the chunk number of each."""
        owners, tokens = marked_tokens_of(self.titles)
        return tokens, owners.to_numpy().astype(np.int64)

    def title_token_forms(self, form: TokenForm) -> pa.Array:
        """The marked tokens of the titles (`title_tokens`) in this form."""
        if ("titles", form) not in self._token_forms:
            self._token_forms["titles", form] = _forms(self.title_tokens[0], form)
        return self._token_forms["titles", form]

    def title_counts(self, folded_word: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk number, count) for each title word that holds the word `folded_word` (folded; for a
        word of a script written without spaces, as often as its characters are in a row inside the
        title word); a chunk may be named more than once."""
        if unspaced(folded_word):
            numbers, counts = [], []
            for part in self.parts:
                inside = pc.count_substring(part.unspaced_title_words, pattern=folded_word).to_numpy(
                    zero_copy_only=False
                )
                holding = np.flatnonzero(inside)
                owners = part.unspaced_title_owners[holding]
                numbers.append(owners[owners >= 0])
                counts.append(inside[holding][owners >= 0].astype(np.int64))
            return np.concatenate([NO_ROWS, *numbers]), np.concatenate([NO_ROWS, *counts])
        holders = self.title_holders(folded_word)
        return holders, np.ones(len(holders), dtype=np.int64)

    def title_holders(self, folded_word: str) -> np.ndarray:
        """The chunk numbers whose titles hold the word `folded_word` (as `title_counts` counts it),
        a chunk once per title word that holds it."""
        found = []
        for part in self.parts:
            if unspaced(folded_word):
                inside = pc.match_substring(part.unspaced_title_words, pattern=folded_word).to_numpy(
                    zero_copy_only=False
                )
                owners = part.unspaced_title_owners[inside]
                found.append(owners[owners >= 0])
            else:
                found.append(part.title_holders(folded_word))
        return np.concatenate([NO_ROWS, *found])


def _forms(tokens: pa.Array, form: TokenForm) -> pa.Array:
    """Tokens in a form (words.compared_form, or lower-cased)."""
    if form == "lowered":
        return lower(tokens)
    ascii_form = pc.replace_substring(lower(tokens) if form == "folded" else tokens, pattern="`", replacement="'")
    return ascii_in_arrow(tokens, ascii_form, lambda token: compared_form(token, form == "capitals"))


def _text(value: pa.Scalar) -> str:
    return value.as_py()


def _has_unspaced(folded_words: pa.Array) -> np.ndarray:
    """Which of these folded words have letters of a script written without spaces (the regex runs
    on the non-ASCII words alone: most of a large vocabulary is ASCII)."""
    found = ~pc.string_is_ascii(folded_words).to_numpy(zero_copy_only=False)
    other = np.flatnonzero(found)
    if len(other):
        inside = pc.match_substring_regex(folded_words.take(pa.array(other)), f"[{UNSPACED_SCRIPTS}]")
        found[other] = inside.to_numpy(zero_copy_only=False)
    return found
