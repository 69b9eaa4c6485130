"""The result a tool call returns: its output model as structured content and as text, each complete
on its own (hosts show one or the other)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from arag_mcp.indexer.index.schema import ChunkColumn
from arag_mcp.server.output.chunk_results import ToolOutput, semantic_output, semantic_text
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.server.search.search_calls import SearchCall
    from arag_mcp.server.search.vector_results import VectorResults

INDEX_WIDE = (ChunkColumn.SOURCE, ChunkColumn.FILE_TYPE)
"""Result fields not repeated in a search's text where every chunk of the index shares them."""
SearchOutput = TypeVar("SearchOutput", bound=ToolOutput)


def tool_result(output: BaseModel, render: Callable[[Any], str]) -> CallToolResult:
    """`output` as structured content, and as the text `render` makes of it."""
    return CallToolResult(
        content=[TextContent(type="text", text=render(output))], structured_content=output.model_dump(exclude_none=True)
    )


def search_result(call: SearchCall, output: SearchOutput, render: Callable[[SearchOutput], str]) -> CallToolResult:
    """A search's result: its text leaves out the fields every chunk of the index shares, and its
    message says what a scoped search searched."""
    catalogue = call.snapshot.catalogue
    output._index_wide = frozenset(c for c in INDEX_WIDE if catalogue.only_value(c) is not None)
    return tool_result(_with_scope(output, call.scope, call.mask), render)


def vector_search_result(call: SearchCall, found: VectorResults, ranked_by: str) -> CallToolResult:
    """A one-query vector search's result: its hits (snippets, or whole chunks where the tool sends
    them), the results passed over for what the conversation has, and where the next page starts."""
    page = found.page
    output = semantic_output(
        page.hits,
        call.current.handle,
        call.current.notice,
        found.deliveries,
        found.snippets,
        ranked_by,
        page.passed_over,
        page.next_offset,
        page.same_text,
    )
    return search_result(call, output, semantic_text)


def _with_scope(output: SearchOutput, scope: dict[str, Any] | None, mask: np.ndarray | None) -> SearchOutput:
    """The message says what a scoped search searched: the model then knows its counts are the scope's."""
    if mask is not None:
        chunks = int(mask.sum())
        searched = (
            f"Searched within the scope {json.dumps(scope, ensure_ascii=False)} ({chunks} of {len(mask)} chunks)."
        )
        output.message = f"{searched} {output.message}"
    return output
