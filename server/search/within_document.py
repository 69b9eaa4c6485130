"""Inside one document (AgenticRAG's find and open) as plain functions over its numbered lines.

Nothing here knows about MCP or conversations: the tools decide what a conversation has seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from arag_mcp.indexer.index.document_lines import DocumentLines

PASSAGES_PER_PATTERN = 2
CONTEXT_LINES = 2
"""Lines shown before and after a matching line."""
WINDOW_LINES = 1800
MAX_WINDOW_CHARS = 40_000
"""About 10,000 tokens: a window stops at this much text, whatever its line count."""


@dataclass(frozen=True)
class Passage:
    pattern: str
    match_lines: tuple[int, ...]
    """The matching lines it was made around, in line order."""
    lines: range
    """The lines shown: each match with CONTEXT_LINES either side, one range where they overlap or touch."""


@dataclass(frozen=True)
class PatternMatches:
    pattern: str
    lines: list[int]
    """Every matching line (substring) or the lines of the nearest sentences (semantic), best first."""
    passages: list[Passage]


def find(document: DocumentLines, patterns: Sequence[str]) -> list[PatternMatches]:
    """Per pattern, the lines containing it (case-insensitive substring), and passages around the
    first PASSAGES_PER_PATTERN of them (see _passages)."""
    lowered = [line.lower() for line in document.lines]
    given = Given()
    found = []
    for pattern in patterns:
        needle = pattern.lower()
        lines = [at for at, text in enumerate(lowered) if needle in text]
        found.append(PatternMatches(pattern, lines, _passages(document, pattern, lines, given)))
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
    given = Given()
    found = []
    for pattern, vector in zip(patterns, pattern_vectors):
        scores = vectors @ vector if len(vectors) else np.zeros(0, dtype=np.float32)
        order = np.lexsort((sentence_lines, -scores))
        lines = list(dict.fromkeys(sentence_lines[order].tolist()))
        found.append(PatternMatches(pattern, lines, _passages(document, pattern, lines, given)))
    return found


@dataclass
class Given:
    """What one find answer gave in its earlier patterns' passages."""

    texts: set[str] = field(default_factory=set)
    lines: set[int] = field(default_factory=set)

    def has(self, document: DocumentLines, lines: range) -> bool:
        """Whether a passage was given: the same text (anywhere), or all of its lines."""
        return _text(document, lines) in self.texts or self.lines.issuperset(lines)

    def add(self, document: DocumentLines, lines: range) -> None:
        self.texts.add(_text(document, lines))
        self.lines.update(lines)


def _passages(document: DocumentLines, pattern: str, lines: list[int], given: Given) -> list[Passage]:
    """Passages around the first PASSAGES_PER_PATTERN matching lines whose passage was not given
    already (for an earlier pattern), merged where they overlap or touch, so that a pattern's
    passages share no line; in the order of their first match."""
    chosen: list[tuple[int, range]] = []
    texts: set[str] = set()
    for line in lines:
        if len(chosen) == PASSAGES_PER_PATTERN:
            break
        shown = range(max(0, line - CONTEXT_LINES), min(len(document.lines), line + CONTEXT_LINES + 1))
        text = _text(document, shown)
        if text not in texts and not given.has(document, shown):
            texts.add(text)
            chosen.append((line, shown))
    passages: list[Passage] = []
    for line, shown in sorted(chosen, key=lambda item: item[1].start):
        last = passages[-1] if passages else None
        if last is not None and shown.start <= last.lines.stop:
            lines_shown = range(last.lines.start, max(last.lines.stop, shown.stop))
            passages[-1] = Passage(pattern, (*last.match_lines, line), lines_shown)
        else:
            passages.append(Passage(pattern, (line,), shown))
    order = {line: at for at, (line, _) in enumerate(chosen)}
    passages.sort(key=lambda passage: min(order[line] for line in passage.match_lines))
    for passage in passages:
        given.add(document, passage.lines)
    return passages


def _text(document: DocumentLines, lines: range) -> str:
    return "\n".join(document.lines[i] for i in lines)


def window(document: DocumentLines, start: int, count: int = WINDOW_LINES) -> range:
    """The lines an open from `start` shows: up to `count` lines and MAX_WINDOW_CHARS characters
    (always at least the first line)."""
    end = min(len(document.lines), start + count)
    size = 0
    for line in range(start, end):
        size += len(document.lines[line]) + 1
        if size > MAX_WINDOW_CHARS and line > start:
            return range(start, line)
    return range(start, end)
