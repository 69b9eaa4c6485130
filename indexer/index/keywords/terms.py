"""The keyword index: the words of every chunk, inverted into one posting list per word.

A chunk's words are the maximal runs of letters, combining marks, digits and '_' in its lower-cased
text. A keyword made only of such characters can only occur inside a word, so its count in a chunk is
Σ_w count(keyword, w) · tf(w, chunk) over the vocabulary words w that contain it: exact keyword
scores from the postings, without reading any chunk text. A keyword with other characters
("marie curie", "covid-19") occurs in a chunk at most as often as its rarest word piece, so the
postings bound its count, and only the texts of chunks whose bound could reach the top are read
(search.py).

Whole-word matching (the default) compares words after `fold`, which removes case, accents and
width, so a folded vocabulary (derived from the stored words when an index is opened) answers it
from the same postings; substring matching (the paper's) searches the stored words themselves.

Beside the words, a chunk's marked tokens (words.MARKED_TOKEN: "--table", "C++", "T-ALL", "ALL")
are inverted as written, each after MARKED_PREFIX: a keyword of one such token occurs only inside
the marked tokens that hold it, so its count too is exact from the postings.

Postings name chunks by their local number in the keyword segment that holds them (segments.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .words import AMPERSAND, AMPERSAND_WORD, CLOSING_MARKS, MARKED_TOKEN, OPENING_MARKS, TOKEN_BREAK, WORD_BREAK, fold

SEGMENT_POSTINGS = 20_000_000
"""Postings inverted at a time when a segment's terms file is written: bounds the writer's memory.
A word may get one row per such part; readers sum them."""


class TermColumn:
    """Columns of a keyword segment's terms file (segments.py): one row per word, its postings."""

    TERM = "term"
    CHUNKS = "chunks"
    """The local numbers (in its segment) of the chunks holding the word."""
    COUNTS = "counts"
    """How often each of those chunks holds it."""


def terms_schema() -> pa.Schema:
    """A segment's terms file: one row per word with its postings."""
    return pa.schema(
        [
            pa.field(TermColumn.TERM, pa.string(), nullable=False),
            pa.field(TermColumn.CHUNKS, pa.list_(pa.int32()), nullable=False),
            pa.field(TermColumn.COUNTS, pa.list_(pa.int32()), nullable=False),
        ]
    )


def lower(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Lower-case as keyword matching does (Unicode simple case mapping, length-preserving)."""
    return pc.utf8_lower(values)


def word_text(lowered: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Lower-cased texts as they are cut into words: "&" as the word "and" (words.with_and)."""
    return pc.replace_substring(lowered, pattern=AMPERSAND, replacement=AMPERSAND_WORD)


def folded(words: pa.Array | pa.ChunkedArray) -> pa.Array:
    """`fold` of each word; ASCII words (most of them) only lower-cased, in Arrow."""
    words = _combined(words)
    return ascii_in_arrow(words, pc.utf8_lower(words), fold)


def ascii_in_arrow(strings: pa.Array, ascii_form: pa.Array, form: Callable[[str], str]) -> pa.Array:
    """`form` of each string, given `ascii_form`, what Arrow makes of the ASCII ones (most of them):
    Python runs `form` on the others alone."""
    other = np.flatnonzero(~pc.string_is_ascii(strings).to_numpy(zero_copy_only=False))
    if not len(other):
        return ascii_form
    mask = np.zeros(len(strings), dtype=bool)
    mask[other] = True
    replacements = pa.array([form(text) for text in strings.take(pa.array(other)).to_pylist()], pa.string())
    return pc.replace_with_mask(ascii_form, pa.array(mask), replacements)


MARKED_PREFIX = " "
"""Begins every marked token stored as a term (words.MARKED_TOKEN): no word holds a space, so the
terms file keeps tokens and words apart, the tokens sorted before the words."""


def chunk_terms(texts: pa.Array | pa.ChunkedArray) -> tuple[pa.ListArray, pa.ListArray]:
    """For each text, its distinct words and marked tokens (MARKED_PREFIX first), and how many times
    each occurs."""
    texts = _combined(texts)
    owners, words = _split(word_text(lower(texts)), WORD_BREAK)
    token_owners, tokens = marked_tokens_of(texts)
    pairs = pa.concat_tables(
        [
            pa.table({"owner": owners, "term": words}),
            pa.table({"owner": token_owners, "term": pc.binary_join_element_wise(MARKED_PREFIX, tokens, "")}),
        ]
    )
    return _counted(pairs, len(texts))


def marked_tokens_of(texts: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(index of its text, token) for every marked token of the texts, stripped, as written
    (words.marked_tokens, in Arrow)."""
    owners, tokens = _split(texts, TOKEN_BREAK)
    cores = pc.utf8_rtrim(pc.utf8_ltrim(tokens, characters=OPENING_MARKS), characters=CLOSING_MARKS)
    marked = pc.match_substring_regex(cores, MARKED_TOKEN)
    return owners.filter(marked), cores.filter(marked)


def chunk_words(texts: pa.Array | pa.ChunkedArray) -> tuple[pa.ListArray, pa.ListArray]:
    """For each text, its distinct words and how many times each occurs."""
    texts = _combined(texts)
    owners, words = _split(word_text(lower(texts)), WORD_BREAK)
    return _counted(pa.table({"owner": owners, "term": words}), len(texts))


def _combined(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    return texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts


def _split(texts: pa.Array, pattern: str) -> tuple[pa.Array, pa.Array]:
    """(index of its text, piece) for every non-empty piece of the texts between matches of `pattern`."""
    split = pc.split_pattern_regex(texts, pattern)
    pieces = pc.list_flatten(split)
    kept = pc.not_equal(pieces, "")
    return pc.list_parent_indices(split).filter(kept), pieces.filter(kept)


def _counted(pairs: pa.Table, text_count: int) -> tuple[pa.ListArray, pa.ListArray]:
    """Per text, its distinct terms and their counts, from (owner, term) pairs."""
    grouped = pairs.group_by(["owner", "term"], use_threads=False).aggregate([([], "count_all")]).sort_by("owner")
    per_text = np.bincount(grouped["owner"].to_numpy(), minlength=text_count)
    offsets = pa.array(np.concatenate([[0], np.cumsum(per_text)]), pa.int32())
    terms = pa.ListArray.from_arrays(offsets, grouped["term"].combine_chunks())
    counts = pa.ListArray.from_arrays(offsets, grouped["count_all"].cast(pa.int32()).combine_chunks())
    return terms, counts


def invert(numbered_terms: Iterable[tuple[np.ndarray, pa.ListArray, pa.ListArray]]) -> Iterator[pa.Table]:
    """Posting tables (term, chunk numbers, counts) from (chunk numbers, terms, counts) batches,
    inverted a segment of about SEGMENT_POSTINGS postings at a time."""
    pending: list[pa.Table] = []
    size = 0
    for numbers, terms, counts in numbered_terms:
        lengths = pc.list_value_length(terms).to_numpy(zero_copy_only=False)
        first = 0
        while first < len(lengths):
            room = np.searchsorted(np.cumsum(lengths[first:]), SEGMENT_POSTINGS - size, side="right")
            last = first + max(int(room), 1)
            pending.append(
                pa.table(
                    {
                        "term": pc.list_flatten(terms.slice(first, last - first)),
                        "chunk": pa.array(np.repeat(numbers[first:last].astype(np.int32), lengths[first:last])),
                        "count": pc.list_flatten(counts.slice(first, last - first)),
                    }
                )
            )
            size += int(lengths[first:last].sum())
            first = last
            if size >= SEGMENT_POSTINGS:
                yield _posting_lists(pending)
                pending, size = [], 0
    if pending:
        yield _posting_lists(pending)


def _posting_lists(postings: list[pa.Table]) -> pa.Table:
    table = pa.concat_tables(postings)
    lists = table.group_by("term", use_threads=False).aggregate([("chunk", "list"), ("count", "list")])
    return pa.table([lists["term"], lists["chunk_list"], lists["count_list"]], schema=terms_schema())
