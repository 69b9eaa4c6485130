"""The keyword index: the words of every chunk, inverted into one posting list per word.

A chunk's words are the maximal runs of letters, combining marks, digits and '_' in its lower-cased
text. A keyword made only of such characters can only occur inside a word, so its count in a chunk is
Σ_w count(keyword, w) · tf(w, chunk) over the vocabulary words w that contain it: exact keyword
scores from the postings, without reading any chunk text. A keyword with other characters
("marie curie", "covid-19") occurs in a chunk at most as often as its rarest word piece, so the
postings bound its count, and only the texts of chunks whose bound could reach the top are read
(server/retrieval.py).

Whole-word matching (the default) compares words after `fold`, which removes case, accents and
width, so a folded vocabulary (derived from the stored words when an index is opened) answers it
from the same postings; substring matching (the paper's) searches the stored words themselves.

Postings name chunks by number: the rank of the chunk's LanceDB row id in the table version the
manifest commits, so reader and writer agree without relying on scan order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .schema import terms_schema
from .words import AMPERSAND, AMPERSAND_WORD, WORD_BREAK, fold

SEGMENT_POSTINGS = 20_000_000
"""Postings inverted at a time when the terms table is written: bounds the writer's memory.
A word may get one row per segment; readers sum them."""


def lower(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Lower-case as keyword matching does (Unicode simple case mapping, length-preserving)."""
    return pc.utf8_lower(values)


def word_text(lowered: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Lower-cased texts as they are cut into words: "&" as the word "and" (words.with_and)."""
    return pc.replace_substring(lowered, pattern=AMPERSAND, replacement=AMPERSAND_WORD)


def folded(words: pa.Array | pa.ChunkedArray) -> pa.Array:
    """`fold` of each word; ASCII words (most of them) only lower-cased, in Arrow."""
    if isinstance(words, pa.ChunkedArray):
        words = words.combine_chunks()
    result = pc.utf8_lower(words)
    other = np.flatnonzero(~pc.string_is_ascii(words).to_numpy(zero_copy_only=False))
    if not len(other):
        return result
    mask = np.zeros(len(words), dtype=bool)
    mask[other] = True
    replacements = pa.array([fold(word) for word in words.take(pa.array(other)).to_pylist()], pa.string())
    return pc.replace_with_mask(result, pa.array(mask), replacements)


def chunk_terms(texts: pa.Array | pa.ChunkedArray) -> tuple[pa.ListArray, pa.ListArray]:
    """For each text, its distinct words and how many times each occurs."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    split = pc.split_pattern_regex(word_text(lower(texts)), WORD_BREAK)
    words = pc.list_flatten(split)
    pairs = pa.table({"owner": pc.list_parent_indices(split), "term": words}).filter(pc.not_equal(words, ""))
    grouped = pairs.group_by(["owner", "term"], use_threads=False).aggregate([([], "count_all")]).sort_by("owner")
    per_text = np.bincount(grouped["owner"].to_numpy(), minlength=len(texts))
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
