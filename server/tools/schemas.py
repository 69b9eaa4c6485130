"""Tool schemas as hosts list them, without what pydantic adds that tells a model nothing.

A host sends every tool's listing (descriptions, input and output schemas) with every turn, so its
size is paid again and again. Pydantic titles each field after its own name, spells an optional
field as "this or null" with a null default, and a float as "number or integer". Structured content
leaves out empty fields (`model_dump(exclude_none=True)`), so an optional field is simply one not
required; the models still validate what a tool returns. An output schema is listed without its
fields' descriptions: the tool's description and the text result say what the fields hold, and a
model reads the text.
"""

from __future__ import annotations

from typing import Any

NULL = {"type": "null"}
NAMED_SCHEMAS = ("properties", "$defs")
"""Keys whose value maps names to schemas: a property named "title" is not pydantic's title."""


def compact_schema(schema: dict[str, Any], descriptions: bool = True) -> dict[str, Any]:
    """`schema` without field titles, null alternatives, null defaults and number-or-integer unions
    (and without descriptions, unless `descriptions`)."""
    compacted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str) or key == "description" and not descriptions:
            continue
        if key == "default" and value is None:
            continue
        if key in NAMED_SCHEMAS and isinstance(value, dict):
            compacted[key] = {name: compact_schema(part, descriptions) for name, part in value.items()}
        elif isinstance(value, dict):
            compacted[key] = compact_schema(value, descriptions)
        elif isinstance(value, list):
            compacted[key] = [compact_schema(part, descriptions) if isinstance(part, dict) else part for part in value]
        else:
            compacted[key] = value
    alternatives = compacted.get("anyOf")
    if isinstance(alternatives, list):
        kept = [part for part in alternatives if part != NULL]
        if kept == [{"type": "number"}, {"type": "integer"}]:
            kept = [{"type": "number"}]
        if len(kept) == 1:
            del compacted["anyOf"]
            compacted = {**kept[0], **compacted}
        else:
            compacted["anyOf"] = kept
    return compacted
