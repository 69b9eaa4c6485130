"""Inside one document (AgenticRAG's find and open) as plain functions over its numbered lines.

Nothing here knows about MCP or conversations: the tools decide what a conversation has seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from arag_mcp.indexer.documents import DocumentLines

PASSAGES_PER_PATTERN = 2
CONTEXT_LINES = 2
"""Lines shown before and after a matching line."""
MAX_PATTERNS = 10
"""With PASSAGES_PER_PATTERN passages of 2 * CONTEXT_LINES + 1 lines of at most LINE_CHARS, one
find answers in at most ~20,000 characters of passages (about 5,000 tokens)."""
WINDOW_LINES = 1800
MAX_WINDOW_CHARS = 40_000
"""About 10,000 tokens: a window stops at this much text, whatever its line count."""


@dataclass(frozen=True)
class Passage:
    pattern: str
    match_line: int
    lines: range
    """The lines shown: the match with CONTEXT_LINES either side."""


@dataclass(frozen=True)
class PatternMatches:
    pattern: str
    lines: list[int]
    """Every matching line (substring) or the lines of the nearest sentences (semantic), best first."""
    passages: list[Passage]


def find(document: DocumentLines, patterns: Sequence[str]) -> list[PatternMatches]:
    """Per pattern, the lines containing it (case-insensitive substring), and passages around the
    first PASSAGES_PER_PATTERN of them whose text was not already given for an earlier match."""
    lowered = [line.lower() for line in document.lines]
    seen: set[str] = set()
    found = []
    for pattern in patterns:
        needle = pattern.lower()
        lines = [number for number, line in enumerate(lowered) if needle in line]
        found.append(PatternMatches(pattern, lines, _passages(document, pattern, lines, seen)))
    return found


def find_semantic(
    document: DocumentLines,
    patterns: Sequence[str],
    pattern_vectors: np.ndarray,
    sentences: tuple[list[str], list[int], np.ndarray],
) -> list[PatternMatches]:
    """Per pattern, the lines of the document's sentences nearest it (cosine, best first), and
    passages around the best PASSAGES_PER_PATTERN."""
    chunk_ids, starts, vectors = sentences
    index_of = {cid: i for i, cid in enumerate(document.chunk_ids)}
    sentence_lines = np.array([document.line_at(index_of[c], s) for c, s in zip(chunk_ids, starts)], dtype=np.int64)
    seen: set[str] = set()
    found = []
    for pattern, vector in zip(patterns, pattern_vectors):
        scores = vectors @ vector if len(vectors) else np.zeros(0, dtype=np.float32)
        order = np.lexsort((sentence_lines, -scores))
        lines = list(dict.fromkeys(sentence_lines[order].tolist()))
        found.append(PatternMatches(pattern, lines, _passages(document, pattern, lines, seen)))
    return found


def _passages(document: DocumentLines, pattern: str, lines: list[int], seen: set[str]) -> list[Passage]:
    passages: list[Passage] = []
    for number in lines:
        if len(passages) == PASSAGES_PER_PATTERN:
            break
        shown = range(max(0, number - CONTEXT_LINES), min(len(document.lines), number + CONTEXT_LINES + 1))
        text = "\n".join(document.lines[i] for i in shown)
        if text not in seen:
            seen.add(text)
            passages.append(Passage(pattern, number, shown))
    return passages


def window(document: DocumentLines, start: int, count: int = WINDOW_LINES) -> range:
    """The lines an open from `start` shows: up to `count` lines and MAX_WINDOW_CHARS characters
    (always at least the first line)."""
    end = min(len(document.lines), start + count)
    size = 0
    for number in range(start, end):
        size += len(document.lines[number]) + 1
        if size > MAX_WINDOW_CHARS and number > start:
            return range(start, number)
    return range(start, end)


def numbered(document: DocumentLines, lines: Sequence[int]) -> str:
    """The lines, each after its number: what the model cites and opens at."""
    return "\n".join(f"{number}: {document.lines[number]}" for number in lines)
