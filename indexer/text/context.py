"""The text embedded for each sentence: the sentence placed in its document.

A sentence alone often means nothing: "He was born in 1950." does not say whose birth it is, and
"The good news is it can be cured in most cases." does not say what can be cured. So a sentence is
embedded after its document's title and the path of headings it sits under ("Guide › Install ›
Windows", a leading heading that repeats the title left out), and, where the document was cut
into several chunks (which all share that title), after the words that set its chunk apart from
the document's other chunks: the chunk's CONTEXT_TERMS highest tf-idf words, document frequency counted over the document's own
chunks. Those words depend on the document alone, so an incremental build, which re-embeds whole
documents, never leaves stale context behind. A short sentence ("Email: valgrind@valgrind.org",
a title page's line) is embedded with the sentences beside it in its chunk: alone, its vector is
mostly its title's meaning, close to every question about the document. The stored and returned
sentence is the sentence alone. What each part buys on the quality benchmark: bench/README.md.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence

import pyarrow as pa
from arag_mcp.indexer.index.chunks import PATH_SEPARATOR, below_title
from arag_mcp.indexer.index.keywords import chunk_words

SENTENCE_CONTEXT = "title+heading-path+chunk-terms-8+short-neighbours-8"
"""Recorded in the manifest: an index is only extended with the context it was embedded with."""
CONTEXT_TERMS = 8
STOP_WORDS = frozenset(
    """
    a about after all also an and any are as at be been before being between both but by can could
    did do does down during each for from had has have he her here his how i if in into is it its
    just many may me might more most much my no not of on only or other our out over own same she
    should so some such than that the their them then there these they this those through to too
    under up us very was we were what when where which who whom why will with would you your
    """.split()
)
"""Function words never chosen as context, whatever their tf-idf in a short document."""


def chunk_context_terms(chunk_texts: Sequence[str]) -> list[list[str]]:
    """For each chunk of one document, the words that distinguish it from the document's other
    chunks, best first; empty lists for a document of one chunk. Words are the keyword index's."""
    if len(chunk_texts) < 2:
        return [[] for _ in chunk_texts]
    words, counts = chunk_words(pa.array(chunk_texts, pa.string()))
    frequencies = [
        {word: tf for word, tf in zip(chunk_words, chunk_counts) if _is_content_word(word)}
        for chunk_words, chunk_counts in zip(words.to_pylist(), counts.to_pylist())
    ]
    chunks_with = Counter(word for chunk in frequencies for word in chunk)
    total = len(frequencies)
    terms = []
    for chunk in frequencies:
        scores = {word: tf * math.log(total / chunks_with[word]) for word, tf in chunk.items()}
        ranked = sorted((word for word in scores if scores[word] > 0), key=lambda word: (-scores[word], word))
        terms.append(ranked[:CONTEXT_TERMS])
    return terms


def _is_content_word(word: str) -> bool:
    return len(word) > 1 and not word.isdigit() and word not in STOP_WORDS


SHORT_SENTENCE_WORDS = 8
"""A sentence of fewer words is embedded with its neighbours."""
NEIGHBOUR_WORDS = 24
"""Words taken from each neighbour: the end of the one before, the start of the one after, so that
the short sentence stays inside the model's window."""


def with_neighbours(sentences: Sequence[str], position: int) -> str:
    """The sentence at `position` of a chunk's `sentences` as it is embedded: itself, or where it is
    short, between the end of the sentence before and the start of the one after."""
    sentence = sentences[position]
    if len(sentence.split()) >= SHORT_SENTENCE_WORDS:
        return sentence
    before = sentences[position - 1].split()[-NEIGHBOUR_WORDS:] if position else []
    after = sentences[position + 1].split()[:NEIGHBOUR_WORDS] if position + 1 < len(sentences) else []
    return " ".join([*before, sentence, *after])


def embedding_text(title: str, heading_path: Sequence[str], context_terms: Sequence[str], sentence: str) -> str:
    """The text embedded for `sentence`: "Title › Section › Subsection (term, term, ...): sentence"."""
    place = PATH_SEPARATOR.join(part for part in (title, *below_title(title, heading_path)) if part)
    terms = f"({', '.join(context_terms)})" if context_terms else ""
    context = f"{place} {terms}" if place and terms else place or terms
    return f"{context}: {sentence}" if context else sentence


def embedding_key(text: str) -> int:
    """What identifies a sentence's vector: a 64-bit hash of the text it is embedded as (with its
    context). An edited document's sentences whose key is unchanged keep their vectors."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True)
