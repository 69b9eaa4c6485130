"""A chunk as the index describes it: its header (what a search result names), its text, and the
heading path it sits under, as results and embedded sentences show it.

Plain data with no storage behind it, so that code showing chunks (the server's tools) need not
load the storage layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .ids import chunk_id, parse_chunk_id

PATH_SEPARATOR = " › "


@dataclass(frozen=True)
class ChunkHeader:
    """A chunk as a search result names it: everything but its text."""

    chunk_id: str
    doc_id: str
    title: str
    source: str
    part: int
    """Its place in its document, from 0."""
    parts: int
    """How many chunks its document has."""
    sentence_count: int
    tokens: int
    """Its length in the embedding model's tokens (keyword scores discount long chunks by it)."""
    metadata: dict[str, Any]
    heading_path: tuple[str, ...]
    """The headings its first character sits under, outermost first."""
    pages: tuple[int, int] | None
    """(first, last) page, from 1, in a document with pages."""
    file_type: str
    """What its document was read as ("md", "html", "jsonl", ...)."""

    @property
    def previous_chunk_id(self) -> str | None:
        return self._neighbour(self.part - 1)

    @property
    def next_chunk_id(self) -> str | None:
        return self._neighbour(self.part + 1)

    def _neighbour(self, part: int) -> str | None:
        parsed = parse_chunk_id(self.chunk_id)
        if parsed is None or not 0 <= part < self.parts:
            return None
        return chunk_id(parsed[0], part)


@dataclass(frozen=True)
class Chunk(ChunkHeader):
    """A chunk with its text, as chunk_read and keyword matching need it."""

    text: str
    sentence_spans: tuple[tuple[int, int], ...]
    """Character spans of its sentences in `text`."""

    @property
    def sentences(self) -> list[str]:
        return [self.text[start:end] for start, end in self.sentence_spans]


def below_title(title: str, heading_path: Sequence[str]) -> tuple[str, ...]:
    """The heading path without a leading heading that repeats the document's title (a page's
    first heading often is its title: "Path" under "Path | Node.js Documentation")."""
    if heading_path and _repeats(title, heading_path[0]):
        return tuple(heading_path[1:])
    return tuple(heading_path)


def _repeats(title: str, heading: str) -> bool:
    """Whether the title is the heading, or starts with it ("Path | Node.js Documentation" and "Path")."""
    title, heading = title.casefold(), heading.casefold()
    return title == heading or (title.startswith(heading) and not title[len(heading)].isalnum())
