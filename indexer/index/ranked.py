"""A ranked chunk, as both searches return it (keyword search here, semantic search in the server),
and the rule that ranks chunks by score with ties to the smaller chunk id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .chunks import ChunkHeader


@dataclass(frozen=True)
class Hit:
    """A ranked chunk and the sentences that made it match (keywords found, or nearest the query).

    Semantic search names its chunks by header alone (read from memory); keyword search, which
    reads the chunks' texts to find its sentences, gives whole chunks."""

    chunk: ChunkHeader
    score: float
    matched: list[str]
    keywords: tuple[str, ...] = ()
    """The keywords it matched (keyword search)."""
    page_of: str | None = None
    """The keyword whose page it is, which ranks it first (keyword search): said on its result line."""


@dataclass(frozen=True)
class PassedOver:
    """A chunk left out of the results because the conversation has all its text."""

    rank: int
    """Its place in the ranking (from 1), where it would have been shown."""
    chunk_id: str
    title: str


def top_chunks(scores: np.ndarray, id_rank: np.ndarray, top_k: int) -> np.ndarray:
    """Numbers of the `top_k` chunks with the highest non-zero scores; ties go to the smaller id."""
    scored = np.flatnonzero(scores)
    if scored.size > top_k:
        threshold = np.partition(scores[scored], -top_k)[-top_k]
        scored = scored[scores[scored] >= threshold]
    order = np.lexsort((id_rank[scored], -scores[scored]))
    return scored[order[:top_k]]
