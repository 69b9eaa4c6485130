"""Retrieval as plain functions over an opened index, what each conversation was sent, and what a
search call sends it: no MCP here.

The tools reach what loads NumPy and Arrow through the names below, each imported when first used
(at a tool's first call): the server creates its tools, and answers the handshake, without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .keyword_results import keyword_results_for
    from .merged_results import merged_results_for, merged_with_keywords
    from .retrieval import naive_search, semantic_search
    from .scope import ScopeError
    from .search_calls import SearchCall
    from .vector_results import vector_results_for
    from .within_document import find, find_semantic, window

_HOMES = {
    "keyword_results_for": "keyword_results",
    "merged_results_for": "merged_results",
    "merged_with_keywords": "merged_results",
    "naive_search": "retrieval",
    "semantic_search": "retrieval",
    "ScopeError": "scope",
    "SearchCall": "search_calls",
    "vector_results_for": "vector_results",
    "find": "within_document",
    "find_semantic": "within_document",
    "window": "within_document",
}
"""Each name's module, imported when the name is first asked for (no name is a module's: an
imported module would stand in its place)."""

__all__ = [
    "ScopeError",
    "SearchCall",
    "find",
    "find_semantic",
    "keyword_results_for",
    "merged_results_for",
    "merged_with_keywords",
    "naive_search",
    "semantic_search",
    "vector_results_for",
    "window",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
