"""Tool arguments as models send them: common slips accepted, the rest named in one line.

`ArgumentCheck` applies this to every tools/call before the SDK validates its arguments (a
ServerMiddleware: mcp.server.context).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from arag_mcp.server.search.limits import quoted
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.tools import Tool
from mcp_types import TextContent
from pydantic import ValidationError

ARGUMENT_HINTS = {
    "keywords": 'keywords must be a list of short terms, e.g. ["Marie Curie", "1911"]',
    "query": "query must be a non-empty question or description",
    "chunk_ids": 'chunk_ids must be a list of chunk ids from the search results, e.g. ["k3j9x2abq7-0"]',
    "queries": 'queries must be a list of 1-5 questions or descriptions, e.g. ["who discovered radium"]',
    "patterns": 'patterns must be a list of words or phrases, e.g. ["Nobel Prize"]',
    "ref": "ref must be a ref (chunk id) from the search results",
    "start_line": "start_line must be a line number from 0",
    "conversation": "conversation must be the handle string a previous result gave",
    "again": "again must be true or false",
    "scope": 'scope must be an object of conditions, e.g. {"source": "docs/guide", "file_type": "md"}, '
    "each value a string, number or true/false",
}
LIST_ARGUMENTS = {"keywords", "chunk_ids", "queries", "patterns"}
ARGUMENT_ALIASES = {
    "keyword": ("keywords",),
    "terms": ("keywords",),
    "question": ("query", "queries"),
    "query": ("queries",),
    "chunk_id": ("chunk_ids", "ref"),
    "ids": ("chunk_ids",),
    "id": ("ref",),
    "pattern": ("patterns",),
    "line": ("start_line",),
    "k": ("top_k",),
    "limit": ("top_k",),
}


def coerce_arguments(arguments: dict[str, Any], accepted: set[str]) -> dict[str, Any]:
    """Accept common aliases of the tool's own arguments (`accepted`), a single string where a
    list is expected, and a scope sent as JSON text or as a bare source pattern."""
    coerced = {}
    for key, value in arguments.items():
        if key not in accepted:
            key = next((name for name in ARGUMENT_ALIASES.get(key, ()) if name in accepted), key)
        coerced[key] = value
    for key in LIST_ARGUMENTS & accepted:
        if isinstance(coerced.get(key), str):
            coerced[key] = [coerced[key]]
    if "scope" in accepted and isinstance(coerced.get("scope"), str):
        coerced["scope"] = _scope_from_text(coerced["scope"])
    return coerced


def unknown_arguments(tool: str, unknown: Sequence[str], properties: dict[str, Any]) -> str:
    """One line naming the arguments `tool` does not take (each with the nearest one it does) and
    those it takes: a misspelt `topk` silently dropped made a search return the default count."""
    named = []
    for key in unknown:
        near = difflib.get_close_matches(key, list(properties), n=1)
        named.append(quoted(key) + (f" (did you mean {near[0]!r}?)" if near else ""))
    return f"{tool} takes no argument {', '.join(named)}; its arguments are {', '.join(properties)}"


def _scope_from_text(text: str) -> Any:
    """A scope given as text: JSON for an object, otherwise the source pattern itself ("" is no scope).
    Text that is not JSON, or that JSON cannot read (nesting thousands deep, a number of thousands
    of digits), stays text, which the scope's check then names."""
    if not text.strip():
        return None
    try:
        return json.loads(text) if text.lstrip().startswith("{") else {"source": text}
    except (ValueError, RecursionError):
        return text


def describe_invalid(error: ValidationError, properties: dict[str, Any]) -> str:
    """One line naming each bad argument, what was given and what is expected; a bounded number's
    bounds are the ones the tool's schema (`properties`) gives it."""
    parts = []
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else "arguments"
        bounds = properties.get(field, {})
        hint = (
            f"{field} must be a whole number from {bounds['minimum']} to {bounds['maximum']}"
            if "minimum" in bounds and "maximum" in bounds
            else ARGUMENT_HINTS.get(field, f"{field}: {item['msg']}")
        )
        given = "nothing" if item["type"] == "missing" else quoted(item.get("input"))
        parts.append(f"{hint}; got {given}")
    return "; ".join(dict.fromkeys(parts))


class ArgumentCheck:
    """The server's arguments middleware: a tools/call's arguments coerced (`coerce_arguments`), and
    refused in one line where the tool does not take one (`unknown_arguments`) or one is invalid
    (`describe_invalid`). A refused call still goes to the SDK, which refuses it too (the same
    argument model, closed to other arguments), so that the answer keeps the envelope the SDK gives
    every result (a result the middleware made itself would not carry its serverInfo stamp); the
    refusal's text is ours."""

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self.tools = tools

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method != "tools/call" or not params or not isinstance(params.get("name"), str):
            return await call_next(ctx)
        tool, arguments = self.tools.get(params["name"]), params.get("arguments")
        if tool is None or not isinstance(arguments, dict | None):  # the SDK answers both
            return await call_next(ctx)
        properties = tool.parameters.get("properties", {})
        coerced = coerce_arguments(arguments or {}, set(properties))
        refusal = _refusal(tool, coerced, properties)
        answer = await call_next(replace(ctx, params={**params, "arguments": coerced}))
        if refusal is not None and isinstance(answer, dict) and answer.get("isError"):
            text = TextContent(type="text", text=refusal).model_dump(mode="json", by_alias=True, exclude_none=True)
            answer = {**answer, "content": [text]}
        return answer


def _refusal(tool: Tool, arguments: dict[str, Any], properties: dict[str, Any]) -> str | None:
    """Why `tool` cannot take `arguments`, in one line, validated as the SDK validates them; None when it can."""
    unknown = [key for key in arguments if key not in properties]
    if unknown:
        return unknown_arguments(tool.name, unknown, properties)
    try:
        tool.fn_metadata.validate_arguments(arguments)
    except ValidationError as exc:
        return describe_invalid(exc, properties)
    return None
