"""Tool arguments as models send them: common slips accepted, the rest named in one line."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from .limits import MAX_TOP_K

ARGUMENT_HINTS = {
    "keywords": 'keywords must be a list of short terms, e.g. ["Marie Curie", "1911"]',
    "query": "query must be a non-empty question or description",
    "top_k": f"top_k must be a whole number from 1 to {MAX_TOP_K}",
    "chunk_ids": 'chunk_ids must be a list of chunk ids from the search results, e.g. ["k3j9x2abq7-0"]',
    "session": "session must be the handle string a previous result gave",
}
LIST_ARGUMENTS = {"keywords", "chunk_ids"}
ARGUMENT_ALIASES = {
    "keyword": "keywords",
    "terms": "keywords",
    "question": "query",
    "chunk_id": "chunk_ids",
    "ids": "chunk_ids",
    "k": "top_k",
    "limit": "top_k",
}


def coerce_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Accept common aliases, and a single string where a list is expected."""
    coerced = {ARGUMENT_ALIASES.get(key, key): value for key, value in arguments.items()}
    for key in LIST_ARGUMENTS:
        if isinstance(coerced.get(key), str):
            coerced[key] = [coerced[key]]
    return coerced


def describe_invalid(error: ValidationError) -> str:
    """One line naming each bad argument, what was given and what is expected."""
    parts = []
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else "arguments"
        hint = ARGUMENT_HINTS.get(field, f"{field}: {item['msg']}")
        given = "nothing" if item["type"] == "missing" else f"{json.dumps(item.get('input'), default=str)[:60]}"
        parts.append(f"{hint}; got {given}")
    return "; ".join(dict.fromkeys(parts))
