"""A keyword's count in each chunk that holds it: the chunks it is not in are left out, so a
search costs what its postings hold, not what the index holds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NO_NUMBERS = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class CountsByChunk:
    """`counts[i]` (never 0) in chunk number `numbers[i]` (ascending); 0 in every other chunk."""

    numbers: np.ndarray
    counts: np.ndarray

    @classmethod
    def none(cls) -> CountsByChunk:
        return cls(NO_NUMBERS, NO_NUMBERS)

    @classmethod
    def summed(cls, numbers: np.ndarray, counts: np.ndarray) -> CountsByChunk:
        """The sum of `counts` per chunk number of `numbers` (in any order, repeated or not)."""
        numbers = numbers.astype(np.int64, copy=False)
        counts = counts.astype(np.int64, copy=False)
        if len(numbers) > 1 and not (numbers[1:] > numbers[:-1]).all():
            numbers, owners = np.unique(numbers, return_inverse=True)
            counts = np.bincount(owners, weights=counts, minlength=len(numbers)).astype(np.int64)
        kept = counts != 0
        return cls(numbers, counts) if kept.all() else cls(numbers[kept], counts[kept])

    @classmethod
    def every(cls, chunk_count: int, count: int) -> CountsByChunk:
        """`count` in every chunk."""
        return cls(np.arange(chunk_count, dtype=np.int64), np.full(chunk_count, count, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.numbers)

    def plus(self, other: CountsByChunk) -> CountsByChunk:
        if len(self) < len(other):
            return other.plus(self)
        if not len(other):
            return self
        at = self.positions(other.numbers)
        shared = at >= 0
        counts = self.counts.copy()
        counts[at[shared]] += other.counts[shared]
        if shared.all():
            return CountsByChunk(self.numbers, counts)
        added, places = other.numbers[~shared], np.searchsorted(self.numbers, other.numbers[~shared])
        return CountsByChunk(np.insert(self.numbers, places, added), np.insert(counts, places, other.counts[~shared]))

    def minimum(self, other: CountsByChunk) -> CountsByChunk:
        """The smaller count per chunk: the chunks both hold."""
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        at = large.positions(small.numbers)
        found = at >= 0
        return CountsByChunk(small.numbers[found], np.minimum(small.counts[found], large.counts[at[found]]))

    def within(self, scope: np.ndarray | None) -> CountsByChunk:
        """The chunks in `scope` (a mask over chunk numbers; None: all)."""
        if scope is None:
            return self
        kept = scope[self.numbers]
        return self if kept.all() else CountsByChunk(self.numbers[kept], self.counts[kept])

    def positions(self, numbers: np.ndarray) -> np.ndarray:
        """Where each of `numbers` is in `self.numbers`, -1 where it is not."""
        at = np.searchsorted(self.numbers, numbers)
        inside = at < len(self.numbers)
        found = np.zeros(len(numbers), dtype=bool)
        found[inside] = self.numbers[at[inside]] == numbers[inside]
        return np.where(found, at, -1)

    def at(self, numbers: np.ndarray) -> np.ndarray:
        """The counts of these chunk numbers (0 where absent)."""
        at = self.positions(numbers)
        return np.where(at >= 0, self.counts[np.maximum(at, 0)] if len(self) else 0, 0).astype(np.int64)


def union(numbers: list[np.ndarray], chunk_count: int) -> np.ndarray:
    """The chunk numbers in any of these ascending arrays, ascending: by a mask over every chunk
    where they are many, else by sorting."""
    numbers = [found for found in numbers if len(found)]
    if len(numbers) <= 1:
        return numbers[0] if numbers else NO_NUMBERS
    if sum(map(len, numbers)) * 16 < chunk_count:
        return np.unique(np.concatenate(numbers))
    held = np.zeros(chunk_count, dtype=bool)
    for found in numbers:
        held[found] = True
    return np.flatnonzero(held)
