"""What find and open share in their results: a document's lines, each after its number, and the runs
of lines this conversation already has, with the calls that sent them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arag_mcp.indexer.index.document_lines import DocumentLines
    from arag_mcp.server.search.conversations import Origin

ALREADY_HERE = "already in this conversation"


def sent_by(seen: Mapping[int, Origin], lines: Sequence[int]) -> list[str]:
    """The calls that sent `lines`, in the order they were made."""
    return [str(origin) for origin in sorted({seen[line] for line in lines}, key=lambda origin: origin.call)]


def numbered(document: DocumentLines, lines: Sequence[int]) -> str:
    """The lines, each after its line number: what the model cites and opens at."""
    return "\n".join(f"{line}: {document.lines[line]}" for line in lines)
