"""The arguments several tools take, as annotated types: a tool's signature is its input schema, so
each type carries its bounds and the description the model reads."""

from __future__ import annotations

from typing import Annotated, Any

from arag_mcp.server.search.limits import MAX_OFFSET, MAX_QUERIES, MAX_TOP_K
from pydantic import BeforeValidator, Field


def _not_a_boolean(value: Any) -> Any:
    """pydantic reads true as 1 where a number is asked; a count or a line number is never true or false."""
    if isinstance(value, bool):
        raise ValueError("a whole number, not true or false")
    return value


WholeNumber = BeforeValidator(_not_a_boolean)
"""Placed after the Field: before it, pydantic leaves the bounds out of the JSON schema."""
TopK = Annotated[int, Field(ge=1, le=MAX_TOP_K, description="chunks to return"), WholeNumber]
Offset = Annotated[
    int,
    Field(
        ge=0,
        le=MAX_OFFSET,
        description="skip this many results",
    ),
    WholeNumber,
]
ConversationHandle = Annotated[
    str | None,
    Field(description="the `conversation` handle of earlier results; omit it at the start"),
]
Query = Annotated[str, Field(description="one question or description")]
Queries = Annotated[
    list[str],
    Field(description=f"1-{MAX_QUERIES} queries: reformulations of one need, or its parts; results are merged"),
]
ScopeConditions = Annotated[
    dict[str, Any] | None,
    Field(
        description='{"title": "Marie Curie"} searches one page; also document, source ("docs/*.md"), '
        "file_type or a metadata field, all holding"
    ),
]
Ref = Annotated[str, Field(description="a ref from search results (a chunk id, or the document part before '-')")]
