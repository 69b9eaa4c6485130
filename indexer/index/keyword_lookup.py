"""Keyword search's side of the index: the vocabulary and title words held in memory, the marked
tokens of texts and titles in the forms keywords compare them in (made when first asked for), and
the postings of the terms table read for the words and tokens a search finds."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .catalogue import ChunkCatalogue
from .mirror import Mirror, Postings
from .reading import read, reading, scan
from .schema import TERMS, TermColumn, terms_schema
from .terms import MARKED_PREFIX, ascii_in_arrow, folded, lower, marked_tokens_of
from .vocabulary import TitleWords, Vocabulary
from .words import UNSPACED_SCRIPTS, compared_form, unspaced

T = TermColumn
AFTER_MARKED_PREFIX = chr(ord(MARKED_PREFIX) + 1)
"""Sorts after every term that begins with MARKED_PREFIX and before every word."""

SPELLINGS_KEPT = 4_096
"""Folded words whose spellings are kept (a few hundred bytes each)."""

TokenForm = Literal["folded", "capitals", "lowered"]
"""How marked tokens are compared: as words.compared_form makes them (folded, or in capitals with
case kept), or lower-cased as substring matching compares text."""


@dataclass(frozen=True)
class KeywordLookup:
    """What keyword search keeps in memory: the vocabulary, and the words of the chunks' titles
    (titles count in whole-word matching; they are short, so their postings are derived here
    rather than stored); and the terms table, whose postings it reads for the words it finds.
    Postings name chunks by the catalogue's chunk numbers."""

    uri: str
    open_table: Callable[[], Any]
    """The terms table (opened when first needed: not at all where the mirror answers)."""
    mirror: Mirror | None
    """The build's mirror (mirror.py): postings are read from it where there is one."""
    titles: pa.Array
    """Every chunk's title, by chunk number."""
    words: pa.Array
    """The distinct terms of the terms table, sorted: the marked tokens first (`token_count` of
    them, terms.MARKED_PREFIX before each), then the words."""
    token_count: int
    folded_spellings: dict[str, list[int]]
    """Folded form → positions in `words` of the non-ASCII words that fold to it (an ASCII word,
    stored lower-cased, is its own folded form): whole-word matching looks words up folded."""
    word_rows: np.ndarray
    """Row ids of the terms table (with a mirror, its row numbers), grouped by word in `words` order
    (a word has a row per segment)."""
    rows_per_word: np.ndarray
    word_row_starts: np.ndarray
    """Where each word's rows begin in `word_rows`."""
    chunk_count: int
    title_words: pa.Array
    """The folded words of every title, sorted."""
    title_owners: np.ndarray
    """Chunk number of each of `title_words`."""
    title_lengths: np.ndarray
    """How many words each chunk's title has, by chunk number."""
    unspaced_words: pa.Array
    """The folded forms of the words with letters of a script written without spaces (terms.py)."""
    unspaced_positions: np.ndarray
    """Where each of `unspaced_words` is in `words`."""
    unspaced_title_words: pa.Array
    """The folded title words with such letters, and the chunk number of each."""
    unspaced_title_owners: np.ndarray
    _spellings: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)
    """`spellings` found so far (at most SPELLINGS_KEPT)."""
    _token_forms: dict[tuple[str, TokenForm], pa.Array] = field(default_factory=dict, compare=False, repr=False)
    """The marked tokens of the texts ("texts") and of the titles ("titles") in each form asked for."""

    @classmethod
    def load(
        cls, uri: str, catalogue: ChunkCatalogue, open_terms: Callable[[], Any], mirror: Mirror | None = None
    ) -> KeywordLookup:
        """`open_terms`: the terms table; `mirror`: the build's mirror, read instead where there is one."""
        if mirror is not None:
            vocabulary, titled = mirror.vocabulary, mirror.title_words
        else:
            with reading(uri, TERMS):
                rows = scan(open_terms().search().select([T.TERM]).with_row_id(True)).read_all()
            vocabulary, titled = Vocabulary.of(rows[T.TERM], rows["_rowid"].to_numpy()), TitleWords.of(catalogue.titles)
        words = vocabulary.words
        token_count = bisect.bisect_left(words, AFTER_MARKED_PREFIX, key=_text)  # the tokens sort first
        other = np.flatnonzero(~pc.string_is_ascii(words).to_numpy(zero_copy_only=False))
        other = other[other >= token_count]
        other_folded = folded(words.take(pa.array(other, pa.int64())))
        spellings: dict[str, list[int]] = {}
        for at, word in zip(other.tolist(), other_folded.to_pylist()):
            spellings.setdefault(word, []).append(at)
        unspaced_words = _has_unspaced(other_folded)
        unspaced_titles = _has_unspaced(titled.words)
        return cls(
            uri,
            open_terms,
            mirror,
            catalogue.titles,
            words,
            token_count,
            spellings,
            vocabulary.rows,
            vocabulary.counts,
            vocabulary.starts,
            len(catalogue),
            titled.words,
            titled.owners,
            np.bincount(titled.owners, minlength=len(catalogue)),
            other_folded.filter(pa.array(unspaced_words)),
            other[unspaced_words],
            titled.words.filter(pa.array(unspaced_titles)),
            titled.owners[unspaced_titles],
        )

    def postings(self, row_ids: np.ndarray) -> Postings:
        """The rows of the terms table with these row ids, flattened."""
        if self.mirror is not None:
            return self.mirror.postings.at(row_ids)
        if not len(row_ids):
            return Postings.of_rows(terms_schema().empty_table())
        rows = self.open_table().take_row_ids(row_ids.tolist()).select(terms_schema().names)
        return Postings.of_rows(read(self.uri, TERMS, rows.to_arrow))

    def rows_containing(self, piece: str) -> np.ndarray:
        """Terms-table row ids of every word that contains `piece` (lower-cased)."""
        matched = pc.match_substring(self.words, pattern=piece).to_numpy(zero_copy_only=False)
        matched[: self.token_count] = False
        return self.word_rows[np.repeat(matched, self.rows_per_word)]

    def spellings(self, folded_word: str) -> list[int]:
        """Positions in `words` of the words whose folded form is `folded_word` (found by bisection,
        and kept: a search looks a word up several times)."""
        if folded_word not in self._spellings:
            if len(self._spellings) >= SPELLINGS_KEPT:
                self._spellings.clear()
            self._spellings[folded_word] = self._spelled(folded_word)
        return self._spellings[folded_word]

    def _spelled(self, folded_word: str) -> list[int]:
        found = list(self.folded_spellings.get(folded_word, ()))
        if folded_word.isascii():
            at = bisect.bisect_left(self.words, folded_word, key=_text)
            if at < len(self.words) and self.words[at].as_py() == folded_word:
                found.append(at)
        return found

    def rows_of_word(self, folded_word: str) -> np.ndarray:
        """Terms-table row ids of every word whose folded form is `folded_word`, or, for a word of
        a script written without spaces, holds it."""
        if unspaced(folded_word):
            holding = pc.match_substring(self.unspaced_words, pattern=folded_word).to_numpy(zero_copy_only=False)
            positions = self.unspaced_positions[holding].tolist()
        else:
            positions = self.spellings(folded_word)
        starts, lengths = self.word_row_starts, self.rows_per_word
        spans = [self.word_rows[starts[at] : starts[at] + lengths[at]] for at in positions]
        return np.concatenate([self.word_rows[:0], *spans])

    def token_forms(self, form: TokenForm) -> pa.Array:
        """Every marked token in this form (see `_forms`), in `words` order; made when first asked for."""
        if ("texts", form) not in self._token_forms:
            tokens = pc.utf8_slice_codeunits(self.words.slice(0, self.token_count), len(MARKED_PREFIX))
            self._token_forms["texts", form] = _forms(tokens, form)
        return self._token_forms["texts", form]

    def rows_of_token(self, position: int) -> np.ndarray:
        """Terms-table row ids of the marked token at `position` in `words`."""
        start = self.word_row_starts[position]
        return self.word_rows[start : start + self.rows_per_word[position]]

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
            inside = pc.count_substring(self.unspaced_title_words, pattern=folded_word).to_numpy(zero_copy_only=False)
            holding = np.flatnonzero(inside)
            return self.unspaced_title_owners[holding], inside[holding].astype(np.int64)
        holders = self.title_holders(folded_word)
        return holders, np.ones(len(holders), dtype=np.int64)

    def title_holders(self, folded_word: str) -> np.ndarray:
        """The chunk numbers whose titles hold the word `folded_word` (as `title_counts` counts it),
        a chunk once per title word that holds it."""
        if unspaced(folded_word):
            inside = pc.match_substring(self.unspaced_title_words, pattern=folded_word).to_numpy(zero_copy_only=False)
            return self.unspaced_title_owners[inside]
        first = bisect.bisect_left(self.title_words, folded_word, key=_text)
        last = bisect.bisect_right(self.title_words, folded_word, lo=first, key=_text)
        return self.title_owners[first:last]


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
