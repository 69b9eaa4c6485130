"""keyword_search: chunks ranked by a score of their keyword counts, exactly, from the postings.

What a count is, and how counts make a score (weights.py), depend on the match mode,
chosen when the server starts:

- "word" (the default): a keyword counts where its words occur in a row as whole words, compared
  after `fold` (case, accents, width); the characters between words do not matter, so "Einstein"
  matches "Einstein's" and "Block B" does not match "Block booking". A keyword's word in a script
  written without spaces (Chinese, Japanese, Thai, ...; Korean too: words.UNSPACED_SCRIPTS) matches
  wherever its characters occur in a row inside a word, so "東京" counts twice in "東京の東京駅"
  (as the keyword of one word; in a keyword of several, once per word it is in). A chunk's title counts as
  part of the chunk (as a line of its own). Scores weigh keywords by rarity (BM25), but the page a
  keyword names comes first whatever its length: the chunks whose title is one of the keywords (the
  same folded words), then those titled "keyword (qualifier)", then the others; within each, by
  score, then chunk id. When top_k is at least the number of keywords, the best chunk of every
  keyword that matches anywhere (its page, else its "(qualifier)" page, else the highest-scoring
  chunk it matches) is among the results, so a frequent keyword cannot drown a rare one; the other
  places go by that order. A keyword of one token whose punctuation or capitals matter ("--table",
  "-O2", "C++", "pg_hba.conf", "T-ALL", "ALL", "IT") matches where a token has it as written
  (words.MarkedKeyword: "ALL" is the acronym, not "all"); where no chunk searched has it so, it is
  matched by its words.
- "substring": the paper's definition, unchanged: case-insensitive substring counts in the chunk
  text (titles not counted), scored Σ count · len(keyword), plain top k by score (ties: chunk id).

A single-word keyword (in substring mode: one made only of word characters) is counted from the
postings alone, and so is a keyword of one marked token (in substring mode: one with
punctuation), from the postings of the marked tokens that hold it (terms.py). A longer one occurs
no more often than its rarest word, which bounds its count and so its weight (which only grows
with the count); it is counted in the texts of the chunks whose bound could still matter, best bound first, until none can: exact results while reading a
few texts, not thousands. Per-keyword chunk counts come from the same arrays; where settling
one would take more than COUNT_READ_LIMIT further texts, it is given as a range.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex

from ..ranked import Hit, PassedOver, top_chunks
from .counts_by_chunk import NO_NUMBERS, CountsByChunk, union
from .lookup import TokenForm
from .terms import folded, lower, word_text
from .weights import LengthWeights, RarityWeights, Weights
from .words import (
    SHORT_WORD_BREAK,
    KeywordMatch,
    MarkedKeyword,
    compared_form,
    fold,
    marked_tokens,
    qualified_subject,
    token_core,
    unspaced,
    with_and,
    word_matches,
    words_of,
)

if TYPE_CHECKING:
    from ..catalogue import ChunkCatalogue
    from ..chunks import Chunk
    from .lookup import KeywordLookup

PHRASE_READ_BATCH = 16
"""Chunk texts read at first to settle counts of several-word keywords; each further read doubles."""
COUNT_READ_LIMIT = 32
"""Further chunk texts read at most to make per-keyword chunk counts exact."""


class ChunkTexts(Protocol):
    """The chunks' texts, read by chunk number (an index's chunk reader)."""

    def at(self, numbers: np.ndarray) -> dict[int, Chunk]: ...

    def texts_at(self, numbers: np.ndarray) -> tuple[np.ndarray, pa.Array]: ...


class SearchedIndex(Protocol):
    """What keyword search reads of an opened build (an IndexSnapshot is one): the catalogue's
    titles, lengths and id order, the chunks' texts, and the words the segments hold."""

    @property
    def catalogue(self) -> ChunkCatalogue: ...

    @property
    def chunks(self) -> ChunkTexts: ...

    @property
    def keywords(self) -> KeywordLookup: ...

    @property
    def chunk_count(self) -> int: ...


@dataclass(frozen=True)
class Keyword:
    text: str
    """As given, stripped (substring mode: lower-cased, as the paper counts it)."""
    pieces: tuple[str, ...]
    """The words looked up in the postings (word mode: folded)."""
    single: bool
    """Counted exactly from the postings; otherwise bounded by its pieces and counted in texts."""
    as_written: TokenMatch | None = None
    """For a keyword of one token whose punctuation or capitals matter ("--table", "C++", "ALL"):
    how it is counted in the marked tokens, exactly from their postings. Where no chunk searched has
    it so, it is matched by its words (`by_words`)."""

    def by_words(self) -> Keyword:
        return Keyword(self.text, self.pieces, len(self.pieces) == 1)

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two keywords the same search."""
        return ("written", self.as_written.core, self.as_written.form) if self.as_written else self.pieces


class TokenMatch(Protocol):
    """How a keyword counts inside tokens (KeywordLookup.token_forms)."""

    core: str
    """What a token must hold (in `form`) for the keyword to occur in it."""
    form: TokenForm

    def count_in(self, text: str) -> int:
        """Occurrences in a token or a text, given in `form`."""
        ...


@dataclass(frozen=True)
class WrittenWord:
    """Whole-word matching of a marked keyword (words.MarkedKeyword)."""

    marked: MarkedKeyword

    @property
    def core(self) -> str:
        return self.marked.core

    @property
    def form(self) -> TokenForm:
        return "capitals" if self.marked.capitals else "folded"

    def count_in(self, text: str) -> int:
        return self.marked.count_in(text)

    def count_in_text(self, text: str) -> int:
        """Occurrences in a text as written."""
        return self.marked.count_in(compared_form(text, self.marked.capitals))


@dataclass(frozen=True)
class WrittenSubstring:
    """Substring matching of a keyword with punctuation in it: lower-cased, counted where it occurs."""

    core: str
    form: TokenForm = "lowered"

    def count_in(self, text: str) -> int:
        return text.count(self.core)


@dataclass(frozen=True)
class ChunkCount:
    """How many chunks match: exactly `at_least` when it equals `at_most`, otherwise a range."""

    at_least: int
    at_most: int

    @property
    def exact(self) -> bool:
        return self.at_least == self.at_most

    def __str__(self) -> str:
        """ "12", or "3-5" for a count not settled."""
        return str(self.at_least) if self.exact else f"{self.at_least}-{self.at_most}"


@dataclass(frozen=True)
class TitledPages:
    """Per keyword, the chunks in the scope whose title names it: exactly (the same folded words),
    or as "keyword (qualifier)". They rank before the chunks that only mention a keyword."""

    exact: list[np.ndarray]
    qualified: list[np.ndarray]


@dataclass(frozen=True)
class KeywordFindings:
    hits: list[Hit]
    """Best first; each hit's `keywords` are those it matched."""
    keywords: list[str]
    """The keywords searched, de-duplicated, in the order given."""
    per_keyword: list[ChunkCount]
    """Chunks each keyword matches, aligned with `keywords`."""
    matching: ChunkCount
    """Chunks any keyword matches."""
    passed_over: list[PassedOver] = field(default_factory=list)
    """Chunks that ranked among the results but were left out (`exclude`), best first."""
    next_offset: int | None = None
    """The `offset` that continues this ranking after these results; None when none is left."""
    offset: int = 0
    """The `offset` this page began at."""


class Matcher(Protocol):
    reads_all_without_words: bool
    """Whether a keyword with no word in it can still match (and so bounds nothing)."""

    def keywords(self, given: Sequence[str]) -> list[Keyword]: ...

    def piece_counts(self, snapshot: SearchedIndex, pieces: Sequence[str]) -> PieceCounts: ...

    def written_counts(self, snapshot: SearchedIndex, keyword: Keyword) -> CountsByChunk:
        """The counts of a keyword matched as written (`Keyword.as_written`)."""
        ...

    def count_in(
        self, snapshot: SearchedIndex, numbers: np.ndarray, keywords: Sequence[Keyword]
    ) -> tuple[np.ndarray, list[np.ndarray]]: ...

    def matching_sentences(self, chunk: Chunk, keywords: Sequence[Keyword]) -> list[str]: ...

    def weights(
        self, snapshot: SearchedIndex, keywords: Sequence[Keyword], holding: list[int], scope: np.ndarray | None
    ) -> Weights:
        """How counts make scores; `holding`: per keyword, the chunks searched that hold all its pieces."""
        ...

    def titled_pages(
        self, snapshot: SearchedIndex, keywords: Sequence[Keyword], scope: np.ndarray | None
    ) -> TitledPages | None:
        """The pages the keywords name, which rank first; None where titles do not count."""
        ...


class WordMatch:
    """Whole words, folded, titles included."""

    reads_all_without_words = False

    def keywords(self, given: Sequence[str]) -> list[Keyword]:
        stripped = [keyword.strip() for keyword in given if keyword.strip()]
        unique: dict[tuple[str, ...], Keyword] = {}
        for text, words in zip(stripped, words_of(lower(pa.array(stripped, pa.string())).to_pylist())):
            pieces = tuple(fold(word) for word in words)
            marked = MarkedKeyword.of(text)
            keyword = Keyword(text, pieces, len(pieces) == 1, WrittenWord(marked) if marked else None)
            unique.setdefault(keyword.key, keyword)
        return list(unique.values())

    def written_counts(self, snapshot: SearchedIndex, keyword: Keyword) -> CountsByChunk:
        """A marked keyword's occurrences in each chunk's text and title."""
        written = keyword.as_written
        lookup = snapshot.keywords
        forms = lookup.title_token_forms(written.form)
        holders = np.flatnonzero(pc.match_substring(forms, pattern=written.core).to_numpy(zero_copy_only=False))
        inside = np.array([written.count_in(form) for form in forms.take(pa.array(holders)).to_pylist()], np.int64)
        in_titles = CountsByChunk.summed(lookup.title_tokens[1][holders], inside)
        return _token_counts(snapshot, written).plus(in_titles)

    def piece_counts(self, snapshot: SearchedIndex, pieces: Sequence[str]) -> PieceCounts:
        lookup = snapshot.keywords

        def in_titles(piece: str) -> CountsByChunk:
            return CountsByChunk.summed(*lookup.title_counts(piece))

        return PieceCounts(snapshot, [lookup.rows_of_word(piece) for piece in pieces], folded, in_titles)

    def count_in(
        self, snapshot: SearchedIndex, numbers: np.ndarray, keywords: Sequence[Keyword]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """A keyword's words in a row in the texts are counted by `_spelling_pattern`, in the texts
        that its loose form (RE2, in Arrow) finds; a keyword with a word of a script written without
        spaces, in every text's folded words."""
        numbers, texts = snapshot.chunks.texts_at(numbers)
        lowered = word_text(lower(texts))
        titles = [with_and(title) for title in lower(snapshot.catalogue.titles.take(pa.array(numbers))).to_pylist()]
        text_words = (
            [_folded_words(text) for text in lowered.to_pylist()] if any(map(_has_unspaced_piece, keywords)) else []
        )
        counts = []
        for keyword in keywords:
            pieces = keyword.pieces
            found = np.array(
                [
                    _occurrences(_folded_words(title), pieces)
                    if pieces and (pieces[0] in title or not title.isascii())
                    else 0
                    for title in titles
                ],
                dtype=np.int64,
            )
            if _has_unspaced_piece(keyword):
                found += [_occurrences(words, pieces) for words in text_words]
            elif (spelled := _spelling_pattern(snapshot, pieces)) is not None:
                maybe = pc.match_substring_regex(lowered, spelled.loose).to_numpy(zero_copy_only=False)
                holding = np.flatnonzero(maybe)
                for at, text in zip(holding.tolist(), lowered.take(pa.array(holding)).to_pylist()):
                    found[at] += len(spelled.exact.findall(text, overlapped=True))
            counts.append(found)
        return numbers, counts

    def matching_sentences(self, chunk: Chunk, keywords: Sequence[Keyword]) -> list[str]:
        """The sentences that hold a keyword; an ASCII sentence's folded words are its lower-cased
        words, so one without a keyword's first word inside it is passed over unsplit."""
        sentences = chunk.sentences
        lowered = lower(pa.array(sentences, pa.string())).to_pylist()
        written = [keyword.as_written for keyword in keywords if isinstance(keyword.as_written, WrittenWord)]
        by_words = [keyword for keyword in keywords if not keyword.as_written]
        firsts = [keyword.pieces[0] for keyword in by_words if keyword.pieces]
        return [
            sentence
            for sentence, text in zip(sentences, lowered)
            if any(match.count_in_text(sentence) for match in written)
            or (
                (not text.isascii() or any(first in text for first in firsts))
                and _holds_any(_folded_words(text), by_words)
            )
        ]

    def weights(
        self, snapshot: SearchedIndex, keywords: Sequence[Keyword], holding: list[int], scope: np.ndarray | None
    ) -> Weights:
        return RarityWeights(snapshot.catalogue.lengths, holding, scope)

    def titled_pages(
        self, snapshot: SearchedIndex, keywords: Sequence[Keyword], scope: np.ndarray | None
    ) -> TitledPages:
        """Of the titles that hold a keyword's first word, those with as many words are compared
        whole, and those with more that end in a bracket are compared without their qualifier;
        each distinct title once."""
        lookup = snapshot.keywords
        exact, qualified = [], []
        for keyword in keywords:
            if keyword.as_written:
                named = _titles_naming_written(snapshot, keyword.as_written, scope)
                exact.append(named[0])
                qualified.append(named[1])
                continue
            span = len(keyword.pieces)
            holders = lookup.title_holders(keyword.pieces[0]) if span else np.zeros(0, dtype=np.int64)
            if scope is not None:
                holders = holders[scope[holders]]
            same = np.unique(holders[lookup.title_lengths[holders] == span])
            exact.append(_titles_naming(snapshot, same, keyword.pieces, whole=True))
            longer = np.unique(holders[lookup.title_lengths[holders] > span])
            qualified.append(_titles_naming(snapshot, longer, keyword.pieces, whole=False))
        return TitledPages(exact, qualified)


def _titles_naming(snapshot: SearchedIndex, numbers: np.ndarray, pieces: tuple[str, ...], whole: bool) -> np.ndarray:
    """The chunks of `numbers` whose title is `pieces` word for word (`whole`), or else is
    "`pieces` (qualifier)"."""
    titles = snapshot.catalogue.titles.take(pa.array(numbers, pa.int64()))
    if not whole:
        bracketed = pc.match_substring_regex(titles, r"\)\s*$")
        numbers, titles = numbers[bracketed.to_numpy(zero_copy_only=False)], titles.filter(bracketed)
    lowered = lower(titles).to_pylist()
    named = {}
    for title in set(lowered):
        subject = title if whole else qualified_subject(title)
        named[title] = subject is not None and tuple(_folded_words(subject)) == pieces
    return numbers[np.array([named[title] for title in lowered], dtype=bool)]


def _titles_naming_written(
    snapshot: SearchedIndex, written: WrittenWord, scope: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The chunks in scope titled as a marked keyword ("C++"), and those titled "keyword (qualifier)"."""
    lookup = snapshot.keywords
    forms = lookup.title_token_forms(written.form)
    holders = np.flatnonzero(pc.equal(forms, written.core).to_numpy(zero_copy_only=False))
    numbers = np.unique(lookup.title_tokens[1][holders])
    if scope is not None:
        numbers = numbers[scope[numbers]]
    titles = lookup.titles.take(pa.array(numbers, pa.int64())).to_pylist()
    exact = [compared_form(token_core(title.strip()), written.marked.capitals) == written.core for title in titles]
    qualified = [
        (subject := qualified_subject(title)) is not None
        and compared_form(token_core(subject), written.marked.capitals) == written.core
        for title in titles
    ]
    return numbers[np.array(exact, dtype=bool)], numbers[np.array(qualified, dtype=bool)]


def _token_counts(snapshot: SearchedIndex, written: TokenMatch) -> CountsByChunk:
    """A keyword's occurrences in the chunks' marked tokens: Σ over the tokens holding it of its
    count in the token · the token's count in the chunk."""
    lookup = snapshot.keywords
    forms = lookup.token_forms(written.form)
    holders = np.flatnonzero(pc.match_substring(forms, pattern=written.core).to_numpy(zero_copy_only=False))
    inside = [written.count_in(form) for form in forms.take(pa.array(holders, pa.int64())).to_pylist()]
    positions = lookup.token_positions[holders]
    counted = [(int(at), count) for at, count in zip(positions, inside) if count]
    if not counted:
        return CountsByChunk.none()
    per_token = {lookup.word_at(at): count for at, count in counted}
    postings = PieceCounts(snapshot, [lookup.rows_of_token(at) for at, _ in counted])
    return postings.per_chunk(np.array([per_token[term] for term in postings.terms.to_pylist()], dtype=np.int64))


def _folded_words(lowered: str) -> list[str]:
    """The folded words of a lower-cased string, by the rule the terms table was cut by."""
    return [fold(word) for word in SHORT_WORD_BREAK.split(with_and(lowered)) if word]


def _occurrences(words: list[str], pieces: tuple[str, ...]) -> int:
    """How often `pieces` occur in these folded words: at each of `word_matches`, except that a
    keyword of one piece of a script written without spaces counts as often as a word holds it."""
    if len(pieces) == 1 and unspaced(pieces[0]):
        return sum(word.count(pieces[0]) for word in words)
    return sum(1 for _ in word_matches(words, pieces))


def _holds_any(words: list[str], keywords: Sequence[Keyword]) -> bool:
    return any(_occurrences(words, keyword.pieces) for keyword in keywords)


def _has_unspaced_piece(keyword: Keyword) -> bool:
    return any(map(unspaced, keyword.pieces))


class PhrasePattern(NamedTuple):
    exact: regex.Pattern
    """Its overlapping matches in a lower-cased chunk text are the occurrences of the words in a row."""
    loose: str
    """An RE2 pattern that matches every text `exact` matches in: the words with any characters but
    ASCII word characters between them, no word boundaries and no Unicode classes (Arrow compiles
    the pattern on every call, and Unicode classes take it most of a millisecond)."""


def _spelling_pattern(snapshot: SearchedIndex, pieces: tuple[str, ...]) -> PhrasePattern | None:
    """The patterns of these folded words in a row: each word spelled as any vocabulary word that
    folds to it (every word of a text is in the vocabulary), whole (no word character either side),
    with non-word characters between them. None when some word is in no text."""
    if not pieces:
        return None
    lookup = snapshot.keywords
    spellings = []
    for piece in pieces:
        found = tuple(dict.fromkeys(lookup.word_at(at) for at in lookup.spellings(piece)))
        if not found:
            return None
        spellings.append(found)
    return _words_in_a_row(tuple(spellings))


@functools.lru_cache(maxsize=256)
def _words_in_a_row(spellings: tuple[tuple[str, ...], ...]) -> PhrasePattern:
    """The patterns of `_spelling_pattern`, made once: a search reads texts in several rounds."""
    alternatives = ["(?:" + "|".join(found) + ")" for found in spellings]
    in_a_row = SHORT_WORD_BREAK.pattern.join(alternatives)
    exact = regex.compile(r"(?<![\p{L}\p{M}\p{N}_])" + in_a_row + r"(?![\p{L}\p{M}\p{N}_])")
    return PhrasePattern(exact, "[^a-z0-9_]+".join(alternatives))


class SubstringMatch:
    """The paper's: lower-cased substrings of the chunk text."""

    reads_all_without_words = True

    def keywords(self, given: Sequence[str]) -> list[Keyword]:
        stripped = [keyword.strip() for keyword in given if keyword.strip()]
        terms = list(dict.fromkeys(lower(pa.array(stripped, pa.string())).to_pylist()))
        return [
            Keyword(term, tuple(words), words == [term], WrittenSubstring(term) if _one_marked_token(term) else None)
            for term, words in zip(terms, words_of(terms))
        ]

    def written_counts(self, snapshot: SearchedIndex, keyword: Keyword) -> CountsByChunk:
        """The occurrences of a keyword with punctuation in each chunk's text."""
        return _token_counts(snapshot, keyword.as_written)

    def piece_counts(self, snapshot: SearchedIndex, pieces: Sequence[str]) -> PieceCounts:
        """A piece can only occur inside a word, so its count is Σ_w count(piece, w) · tf(w, chunk)
        over the vocabulary words w that contain it."""
        return PieceCounts(snapshot, [snapshot.keywords.rows_containing(piece) for piece in pieces])

    def count_in(
        self, snapshot: SearchedIndex, numbers: np.ndarray, keywords: Sequence[Keyword]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        numbers, texts = snapshot.chunks.texts_at(numbers)
        lowered = lower(texts)
        return numbers, [
            pc.count_substring(lowered, pattern=k.text).to_numpy(zero_copy_only=False).astype(np.int64)
            for k in keywords
        ]

    def matching_sentences(self, chunk: Chunk, keywords: Sequence[Keyword]) -> list[str]:
        sentences = chunk.sentences
        lowered = lower(pa.array(sentences, pa.string()))
        matching = np.zeros(len(sentences), dtype=bool)
        for keyword in keywords:
            matching |= pc.match_substring(lowered, pattern=keyword.text).to_numpy(zero_copy_only=False)
        return [sentence for sentence, keep in zip(sentences, matching) if keep]

    def weights(
        self, snapshot: SearchedIndex, keywords: Sequence[Keyword], holding: list[int], scope: np.ndarray | None
    ) -> Weights:
        return LengthWeights([len(keyword.text) for keyword in keywords])

    def titled_pages(
        self, snapshot: SearchedIndex, keywords: Sequence[Keyword], scope: np.ndarray | None
    ) -> TitledPages | None:
        return None


def _one_marked_token(lowered: str) -> bool:
    """Whether a substring keyword is one marked token as it stands (nothing stripped): then every
    token it occurs in is marked, and its count is the sum of its counts in them."""
    return marked_tokens(lowered) == [lowered]


class PieceCounts:
    """count(piece, chunk) in every chunk that holds the piece, from one read of the postings of the
    words the pieces can occur in, made one piece at a time on demand.

    Whole words (`fold_terms` given): a posting counts where its word folds to the piece, and the
    piece's occurrences in titles (`in_titles`) are added. Substrings: a posting counts once per
    occurrence of the piece in its word. Marked tokens: as often as `per_chunk` is told the keyword
    is in each."""

    def __init__(
        self,
        snapshot: SearchedIndex,
        rows: list[np.ndarray],
        fold_terms: Callable[[pa.Array], pa.Array] | None = None,
        in_titles: Callable[[str], CountsByChunk] | None = None,
    ) -> None:
        lookup = snapshot.keywords
        self.postings = lookup.postings(np.unique(np.concatenate([NO_NUMBERS, *rows])))
        self.terms = fold_terms(self.postings.terms) if fold_terms else self.postings.terms
        self.whole_words = fold_terms is not None
        self.in_titles = in_titles

    def of(self, piece: str) -> CountsByChunk:
        if self.whole_words and not unspaced(piece):
            per_term = pc.equal(self.terms, piece).to_numpy(zero_copy_only=False).astype(np.int64)
        else:
            per_term = pc.count_substring(self.terms, pattern=piece).to_numpy(zero_copy_only=False)
        counts = self.per_chunk(per_term)
        return counts.plus(self.in_titles(piece)) if self.in_titles else counts

    def per_chunk(self, per_term: np.ndarray) -> CountsByChunk:
        """Σ over the terms read of (occurrences per term, aligned with `terms`) · the term's count
        in the chunk."""
        postings = self.postings
        held = np.flatnonzero(per_term)
        if len(held) == 1:  # one term: its postings, a slice
            first = int(postings.lengths[: held[0]].sum())
            last = first + int(postings.lengths[held[0]])
            return CountsByChunk.summed(postings.chunks[first:last], postings.counts[first:last] * per_term[held[0]])
        per_posting = np.repeat(per_term, postings.lengths)
        at = np.flatnonzero(per_posting)
        return CountsByChunk.summed(postings.chunks[at], postings.counts[at] * per_posting[at])


MATCHERS: dict[KeywordMatch, Matcher] = {"word": WordMatch(), "substring": SubstringMatch()}


class _ExactTopK:
    """The exact top k: per-keyword counts in the chunks any keyword may match (`numbers`; every array here is
    aligned with them, and a position is a place in it): exact from the postings for single
    keywords, and for the others exact in the chunks read so far (`settled`), bounded elsewhere;
    scores from the counts by the matcher's weights, ties broken by chunk id (`rank`, smaller first)."""

    def __init__(
        self,
        snapshot: SearchedIndex,
        matcher: Matcher,
        keywords: list[Keyword],
        scope: np.ndarray | None,
        written: dict[int, CountsByChunk],
    ) -> None:
        """`scope`: the chunk numbers searched (a mask); chunks outside it count nothing.
        `written`: the counts (within scope) of the keywords matched as written, by position."""
        self.snapshot, self.matcher, self.keywords = snapshot, matcher, keywords
        pieces = sorted({piece for at, keyword in enumerate(keywords) if at not in written for piece in keyword.pieces})
        piece_counts = matcher.piece_counts(snapshot, pieces)
        exact: list[CountsByChunk | None] = []
        bounds: list[CountsByChunk | None] = []
        for at, keyword in enumerate(keywords):
            if at in written:
                exact.append(written[at])
                bounds.append(None)
            elif keyword.single:
                exact.append(piece_counts.of(keyword.pieces[0]).within(scope))
                bounds.append(None)
            else:
                bound = _phrase_bound(
                    keyword.pieces, piece_counts, snapshot.chunk_count, matcher.reads_all_without_words
                )
                exact.append(None)
                bounds.append(bound.within(scope))
        maybe = [counts if bound is None else bound for counts, bound in zip(exact, bounds)]
        self.numbers = union([counts.numbers for counts in maybe], snapshot.chunk_count)
        """The chunk numbers any keyword may match, ascending."""
        self.rank = snapshot.catalogue.id_rank[self.numbers]
        size = len(self.numbers)
        self.counts = [np.zeros(size, dtype=np.int64) if c is None else c.at(self.numbers) for c in exact]
        self.bounds = [None if bound is None else bound.at(self.numbers) for bound in bounds]
        self.phrases = [at for at, bound in enumerate(self.bounds) if bound is not None]
        self.weights = matcher.weights(snapshot, keywords, [len(counts) for counts in maybe], scope)
        self.single_match = np.zeros(size, dtype=bool)
        """Chunks a single keyword matches."""
        self.phrase_match = np.zeros(size, dtype=bool)
        """Chunks a several-word keyword may match."""
        for counts, bound in zip(self.counts, self.bounds):
            if bound is None:
                self.single_match |= counts > 0
            else:
                self.phrase_match |= bound > 0
        self.settled = ~self.phrase_match
        self.scores = self._scored(self.counts, self.single_match)
        upper = [counts if bound is None else bound for counts, bound in zip(self.counts, self.bounds)]
        self.upper = self._scored(upper, self.single_match | self.phrase_match)

    def positions_of(self, numbers: np.ndarray) -> np.ndarray:
        """The positions of these chunk numbers (those among `numbers`)."""
        at = np.searchsorted(self.numbers, numbers)
        inside = at < len(self.numbers)
        at = at[inside]
        return at[self.numbers[at] == numbers[inside]]

    def _scored(self, counts: list[np.ndarray], where: np.ndarray) -> np.ndarray:
        """Scores from these per-keyword counts at the positions `where` (a mask), 0 elsewhere."""
        positions = np.flatnonzero(where)
        scores = np.zeros(len(where), dtype=self.weights.dtype)
        scores[positions] = self.weights.score([count[positions] for count in counts], self.numbers[positions])
        return scores

    def read(self, positions: np.ndarray) -> None:
        """Count the several-word keywords in these chunks' texts."""
        positions = positions[~self.settled[positions]]
        if not len(positions) or not self.phrases:
            return
        numbers, found = self.matcher.count_in(
            self.snapshot, self.numbers[positions], [self.keywords[at] for at in self.phrases]
        )
        positions = np.searchsorted(self.numbers, numbers)
        for at, counts in zip(self.phrases, found):
            self.counts[at][positions] = counts
        self.scores[positions] = self.weights.score([counts[positions] for counts in self.counts], numbers)
        self.settled[positions] = True

    def most_matched(self) -> int:
        """The most keywords any chunk matches: exact where counted, bounded where a several-word
        keyword is not yet read; the chunks that might match more than the best counted are read."""
        batch = PHRASE_READ_BATCH
        while True:
            matched = self.matched()
            best = int(matched[self.settled].max()) if self.settled.any() else 0
            upper = matched + np.sum([(b > 0) & ~self.settled for b in self.bounds if b is not None], axis=0)
            pending = np.flatnonzero(~self.settled & (upper > best))
            if not len(pending) or best == len(self.counts):
                return best
            self.read(pending[np.argsort(-upper[pending], kind="stable")][:batch])
            batch *= 2

    def matched(self, positions: np.ndarray | slice = slice(None)) -> np.ndarray:
        """How many keywords each of these positions (all, by default) matches, as counted so far."""
        if not self.counts:
            return np.zeros(len(self.numbers), dtype=np.int64)[positions]
        return np.sum([counts[positions] > 0 for counts in self.counts], axis=0)

    def settled_scores(self) -> np.ndarray:
        return np.where(self.settled, self.scores, 0)

    def settle_top(self, top_k: int) -> None:
        """Read until the top k by score are settled and no unread chunk could enter them."""
        pending = np.flatnonzero(~self.settled)
        upper = self.upper
        pending = pending[np.lexsort((self.rank[pending], -upper[pending]))]
        batch = PHRASE_READ_BATCH
        while len(pending):
            best = top_chunks(self.settled_scores(), self.rank, top_k)
            if len(best) == top_k:
                kth, challenger = best[-1], pending[0]
                if (upper[challenger], -self.rank[challenger]) < (self.scores[kth], -self.rank[kth]):
                    break
            self.read(pending[:batch])
            pending = pending[batch:]
            pending = pending[~self.settled[pending]]
            batch *= 2

    def best_chunk(self, at: int, excluded: np.ndarray | None) -> int | None:
        """The position of the highest-scoring chunk that keyword `at` matches (ties: `rank`),
        leaving out the positions `excluded` holds, reading chunks in order of their upper bound
        until no unread one could score higher."""
        counts, bound = self.counts[at], self.bounds[at]
        allowed = np.ones(len(counts), dtype=bool) if excluded is None else ~excluded
        upper = self.upper
        pending = np.flatnonzero((counts > 0 if bound is None else bound > 0) & ~self.settled & allowed)
        pending = pending[np.lexsort((self.rank[pending], -upper[pending]))]
        batch = PHRASE_READ_BATCH
        while True:
            best = top_chunks(np.where(self.settled & (counts > 0) & allowed, self.scores, 0), self.rank, 1)
            if not len(pending):
                break
            challenger = pending[0]
            if len(best) and (upper[challenger], -self.rank[challenger]) < (
                self.scores[best[0]],
                -self.rank[best[0]],
            ):
                break
            self.read(pending[:batch])
            pending = pending[batch:]
            pending = pending[~self.settled[pending]]
            batch *= 2
        return int(best[0]) if len(best) else None

    def chunk_counts(self) -> tuple[list[ChunkCount], ChunkCount]:
        """Chunks matched per keyword and by any keyword, reading up to COUNT_READ_LIMIT more texts."""
        unread = np.flatnonzero(~self.settled)
        if 0 < len(unread) <= COUNT_READ_LIMIT:
            self.read(unread)
        per_keyword = []
        for counts, bound in zip(self.counts, self.bounds):
            found = int(np.count_nonzero(counts))
            maybe = 0 if bound is None else int(np.count_nonzero((bound > 0) & ~self.settled))
            per_keyword.append(ChunkCount(found, found + maybe))
        found = self.single_match | (self.settled & (self.scores > 0))
        maybe = ~found & ~self.settled & self.phrase_match
        return per_keyword, ChunkCount(int(np.count_nonzero(found)), int(np.count_nonzero(found | maybe)))


def _phrase_bound(
    pieces: tuple[str, ...], counts: PieceCounts, chunk_count: int, unbounded_without_pieces: bool
) -> CountsByChunk:
    """An upper bound of a keyword's count per chunk: each occurrence holds its own occurrence of
    every piece, so no more than the rarest piece's count (a minimum over the distinct pieces). A
    keyword with no piece either matches nothing (whole words) or is unbounded (substrings of
    punctuation: every chunk is read)."""
    if not pieces:
        return (
            CountsByChunk.every(chunk_count, np.iinfo(np.int32).max)
            if unbounded_without_pieces
            else CountsByChunk.none()
        )
    bound = counts.of(pieces[0])
    for piece in dict.fromkeys(pieces[1:]):
        if piece != pieces[0]:
            bound = bound.minimum(counts.of(piece))
    return bound


def wordless(given: Sequence[str]) -> list[str]:
    """The keywords with no word in them: whole-word matching can never match them."""
    stripped = [keyword.strip() for keyword in given]
    return [k for k, words in zip(stripped, words_of(lower(pa.array(stripped, pa.string())).to_pylist())) if not words]


def keyword_search(
    snapshot: SearchedIndex,
    given: Sequence[str],
    top_k: int,
    match: KeywordMatch = "word",
    scope: np.ndarray | None = None,
    offset: int = 0,
    exclude: np.ndarray | None = None,
) -> KeywordFindings:
    """Chunks ranked by keyword score (ties: see the module's docstring), with the keywords and sentences that matched
    (see the module's docstring for what counts as a match); with `scope` (a mask over chunk
    numbers), only the chunks in it, and the counts are counts within it.

    The results are the first `top_k` of the ranking from place `offset` on, passing over the chunks
    `exclude` holds (a mask: those whose text a conversation already has), which are named in
    `passed_over`; on the first page each keyword's best chunk is its best one not excluded."""
    matcher = MATCHERS[match]
    keywords, written = _as_written_or_by_words(snapshot, matcher, matcher.keywords(given), scope)
    if not keywords:
        return KeywordFindings([], [], [], ChunkCount(0, 0))
    tally = _ExactTopK(snapshot, matcher, keywords, scope, written)
    order = _Order(tally, matcher.titled_pages(snapshot, keywords, scope))
    excluded = None if exclude is None else exclude[tally.numbers]
    depth = offset + top_k + (0 if excluded is None else int(np.count_nonzero(excluded)))
    tally.settle_top(depth)
    order.settle_named()
    ranking = order.top(top_chunks(tally.settled_scores(), tally.rank, depth), depth).tolist()
    bests: list[int] = []
    if offset == 0 and match == "word" and top_k >= len(keywords):
        found = (order.best_of(at, excluded) for at in range(len(keywords)))
        bests = list(dict.fromkeys(position for position in found if position is not None))
    page, passed, place = [], [], offset
    for position in ranking[offset:]:
        if len(page) >= top_k - len(bests):
            break
        place += 1
        if position in bests:
            continue
        if excluded is not None and excluded[position]:
            passed.append((place, position))
        else:
            page.append(position)
    chosen = order.sorted(np.array(bests + page, dtype=np.int64))
    per_keyword, matching = tally.chunk_counts()
    numbers = tally.numbers[chosen]
    chunks = snapshot.chunks.at(numbers)
    hits = []
    for position, number in zip(chosen.tolist(), numbers.tolist()):
        found = [keyword for keyword, counts in zip(keywords, tally.counts) if counts[position]]
        sentences = matcher.matching_sentences(chunks[number], found) or chunks[number].sentences[:1]
        named = order.page_of(position)
        page_of = None if named is None else keywords[named].text
        hits.append(
            Hit(chunks[number], tally.scores[position].item(), sentences, tuple(k.text for k in found), page_of)
        )
    headers = snapshot.catalogue.headers_at(tally.numbers[[position for _, position in passed]])
    passed_over = [PassedOver(rank, header.chunk_id, header.title) for (rank, _), header in zip(passed, headers)]
    unshown = [position for position in ranking[place:] if position not in bests]  # bests come first
    more = bool(unshown) or (len(ranking) == depth and matching.at_most > depth)
    after = place if place > offset else offset + len(chosen)  # a first page of keyword bests only
    return KeywordFindings(
        hits, [k.text for k in keywords], per_keyword, matching, passed_over, after if more else None, offset
    )


def _as_written_or_by_words(
    snapshot: SearchedIndex, matcher: Matcher, keywords: list[Keyword], scope: np.ndarray | None
) -> tuple[list[Keyword], dict[int, CountsByChunk]]:
    """The keywords to search, and the counts (within scope) of those matched as written, by position.
    A marked keyword that no chunk searched has as written is matched by its words instead
    ("covid-19" where the texts write "COVID 19"), unless another keyword already is."""
    counted: list[tuple[Keyword, CountsByChunk | None]] = []
    for keyword in keywords:
        if keyword.as_written:
            counts = matcher.written_counts(snapshot, keyword).within(scope)
            if len(counts):
                counted.append((keyword, counts))
                continue
            keyword = keyword.by_words()
        counted.append((keyword, None))
    unique: dict[tuple[object, ...], tuple[Keyword, CountsByChunk | None]] = {}
    for keyword, counts in counted:
        unique.setdefault(keyword.key, (keyword, counts))
    kept = list(unique.values())
    return [keyword for keyword, _ in kept], {at: counts for at, (_, counts) in enumerate(kept) if counts is not None}


class _Order:
    """The results' order, over the tally's positions: the pages the keywords name first
    (TitledPages), then by score, then chunk id. A named page comes first only where it matches as
    many of the keywords as any chunk ranked: a page named by one keyword does not outrank a chunk
    that matches more of them (it keeps that keyword's guaranteed place, `best_of`)."""

    def __init__(self, tally: _ExactTopK, pages: TitledPages | None) -> None:
        self.tally = tally
        size = len(tally.numbers)
        self.exact = [tally.positions_of(numbers) for numbers in pages.exact] if pages else []
        self.qualified = [tally.positions_of(numbers) for numbers in pages.qualified] if pages else []
        self.classes = np.full(size, 2 if pages else 0, dtype=np.int8)
        """Per position: 0 titled as a keyword, 1 titled "keyword (qualifier)", 2 neither."""
        for positions in self.qualified:
            self.classes[positions] = 1
        for positions in self.exact:
            self.classes[positions] = 0
        self.named = np.flatnonzero(self.classes < 2) if pages else NO_NUMBERS
        """The positions of the chunks the keywords name, in any class."""
        self.most_matched = tally.most_matched() if len(self.named) and len(tally.counts) > 1 else 0
        """The most keywords any chunk matches: named pages that match fewer rank by score."""

    def settle_named(self) -> None:
        """Read the named chunks: they rank whatever their score, so their scores must be exact."""
        self.tally.read(self.named)

    def ranked_classes(self, positions: np.ndarray) -> np.ndarray:
        """The class each position ranks in: its own, but 2 (by score) for a named page that matches
        fewer keywords than the most any chunk matches."""
        classes = self.classes[positions]
        if self.most_matched > 1:
            classes = np.where((classes < 2) & (self.tally.matched(positions) < self.most_matched), 2, classes)
        return classes

    def sorted(self, positions: np.ndarray) -> np.ndarray:
        tally = self.tally
        return positions[np.lexsort((tally.rank[positions], -tally.scores[positions], self.ranked_classes(positions)))]

    def page_of(self, position: int) -> int | None:
        """The keyword (its index) whose page the chunk at `position` is, where that ranks it above
        better scores (`ranked_classes`); None otherwise."""
        if self.ranked_classes(np.array([position]))[0] == 2:
            return None
        for pages in (self.exact, self.qualified):
            for at, positions in enumerate(pages):
                if position in positions:
                    return at
        return None

    def top(self, by_score: np.ndarray, top_k: int) -> np.ndarray:
        """The first `top_k`, given the first `top_k` by score: named pages rank above any of them
        (those that match as many keywords as any chunk does)."""
        return self.sorted(np.union1d(by_score, self.named))[:top_k]

    def best_of(self, at: int, excluded: np.ndarray | None) -> int | None:
        """Keyword `at`'s best position not in `excluded`: its page, else its "(qualifier)" page,
        else its best by score."""
        tally = self.tally
        for named in (self.exact[at], self.qualified[at]) if self.exact else ():
            if excluded is not None:
                named = named[~excluded[named]]
            if len(named):
                return int(named[np.lexsort((tally.rank[named], -tally.scores[named]))][0])
        return tally.best_chunk(at, excluded)
