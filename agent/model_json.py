"""JSON the model writes (tool-call arguments, a planner's steps), parsed and checked in one place.

Every path that reads model-written JSON goes through here, so each gets the same treatment: a
problem is a `ModelJSONError` whose one line says what is wrong, which the caller hands back to
the model or records. Nesting is bounded before parsing: JSON nested thousands deep makes the
parser (and later copies of the value) exceed Python's recursion limit, and no tool takes
arguments nested more than a few levels.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted."""
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
"""A string (to its end, where it is not closed: one pass, whatever the text) or a bracket."""
_LEVEL = {"[": 1, "{": 1, "]": -1, "}": -1}


class ModelJSONError(ValueError):
    """Model-written JSON that cannot be used; the message completes "the arguments are ..."."""


class NotJSON(ModelJSONError):
    """Text that does not parse as JSON at all."""


def loads(text: str) -> Any:
    """The value `text` holds, nested at most MAX_DEPTH deep."""
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise ModelJSONError(f"nested {depth} levels deep (at most {MAX_DEPTH})")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotJSON(f"not valid JSON ({exc.msg} at character {exc.pos})") from None


def nesting(text: str) -> int:
    """How deep arrays and objects nest in `text`, brackets inside strings not counted."""
    deepest = level = 0
    for token in _TOKEN.findall(text):
        level += _LEVEL.get(token, 0)
        deepest = max(deepest, level)
    return deepest


def arguments(raw: str) -> dict[str, Any]:
    """Tool-call arguments: a JSON object (an empty string is no arguments)."""
    value = loads(raw or "{}")
    if not isinstance(value, dict):
        raise ModelJSONError(f"{kind(value)}, not a JSON object of the parameters")
    return value


def string_list(value: Any, name: str) -> list[str]:
    """`value` as a list of strings; `name` says which value it is."""
    if not isinstance(value, list):
        raise ModelJSONError(f"not usable: {name} is {kind(value)}, not a list of strings")
    for item in value:
        if not isinstance(item, str):
            raise ModelJSONError(f"not usable: {name} holds {kind(item)}, not only strings")
    return value


def kind(value: Any) -> str:
    """What a JSON value is, in words."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), "null")
