"""Near-duplicate results: a corpus often holds one paragraph twice (a page and its copy, two
revisions of one article), and a search then spends two of its places on one text. A result whose
sentences are those of a result ranked above it, folded as keywords compare words, takes no place of
its own: it is named on that result's line, and the next chunk of the ranking takes its place.

Nearly the same means that most sentences are shared: at least OVERLAP of the sentences of the
longer of the two. A short chunk held inside a long one is not its duplicate: the long one says more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arag_mcp.indexer.index.chunks import Chunk
from arag_mcp.indexer.index.keywords import words_of

OVERLAP = 0.8
"""Share of the longer chunk's sentences that the other must hold to be its near-duplicate."""


def sentence_keys(chunk: Chunk) -> frozenset[str]:
    """The chunk's sentences, each as its words folded to lower case: layout, punctuation and case aside."""
    return frozenset(" ".join(words) for words in words_of([s.lower() for s in chunk.sentences]) if words)


@dataclass
class NearDuplicates:
    """The results kept so far in ranking order, and the chunks left out as near-duplicates of each."""

    kept: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    of: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Kept chunk id → the (chunk id, title) of each chunk left out as its near-duplicate."""

    def original(self, chunk: Chunk) -> str | None:
        """The id of a kept chunk that `chunk` nearly duplicates (recorded as such), or None: then
        `chunk` is kept, and later chunks are compared with it."""
        keys = sentence_keys(chunk)
        for kept_id, kept_keys in self.kept:
            if keys and len(keys & kept_keys) >= OVERLAP * max(len(keys), len(kept_keys)):
                self.of.setdefault(kept_id, []).append((chunk.chunk_id, chunk.title))
                return kept_id
        self.kept.append((chunk.chunk_id, keys))
        return None
