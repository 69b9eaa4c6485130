"""Scopes: the part of the index a search runs in, resolved once per call to a mask over chunk numbers.

A scope is an object of conditions, all of which a chunk's document must meet:

- "source": a gitignore-style pattern (pathspec's gitwildmatch, as `--exclude` uses) matched
  against the document's source as results show it: "docs/guide" is that folder (or file) and
  everything under it, "*.md" every Markdown file at any depth, "docs/**/api-*.html" what it says;
- "file_type": what the document was read as ("md", "html", "pdf", "jsonl", ...);
- any other key: a metadata field of the document's record, equal to the value given (a number or
  true/false also matches its text, so 1898 and "1898" are the same).

Searches apply the mask inside their ranking, so a scoped search returns the top k within the
scope. A scope that cannot match (an unknown field, a malformed pattern, no such document) is a
ScopeError whose one line names the problem and lists what the index does hold.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pathspec
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from arag_mcp.indexer.reader import IndexSnapshot

SOURCE = "source"
FILE_TYPE = "file_type"
SHOWN_CHOICES = 6
"""How many valid sources, types, fields or values an error lists."""
ScopeValue = str | int | float | bool


class ScopeError(ValueError):
    """A scope that selects nothing, or cannot be read; the message names the fix."""


def in_scope(snapshot: IndexSnapshot, scope: dict[str, ScopeValue] | None) -> np.ndarray | None:
    """The chunk numbers a scope admits, as a boolean mask (None: no scope, every chunk)."""
    if not scope:
        return None
    labels = snapshot.catalogue.labels
    mask = np.ones(labels.num_rows, dtype=bool)
    for key, wanted in scope.items():
        if key == SOURCE:
            mask &= _source_matches(labels["source"], wanted)
        elif key == FILE_TYPE:
            mask &= _file_type_matches(labels["file_type"], wanted)
        else:
            mask &= _field_matches(labels["metadata"], key, wanted)
    if not mask.any():
        raise ScopeError(
            f"no document meets every condition of the scope {_shown(scope)} (each matches some document); "
            "drop or change a condition"
        )
    return mask


def _source_matches(sources: pa.Array, pattern: ScopeValue) -> np.ndarray:
    if not isinstance(pattern, str) or not pattern.strip():
        raise ScopeError(
            f'scope "source" must be a path or pattern such as "docs/guide" or "*.md"; got {_shown(pattern)}'
        )
    pattern = pattern.strip().removeprefix("./")
    problem = _malformed(pattern)
    if problem:
        raise ScopeError(
            f'scope "source" {pattern!r} is malformed ({problem}); give a path or a pattern like "docs/*.md"'
        )
    spec = pathspec.GitIgnoreSpec.from_lines([pattern])
    distinct = pc.unique(sources)
    matched = [source for source in distinct.to_pylist() if spec.match_file(source)]
    if not matched:
        raise ScopeError(
            f'scope "source" {pattern!r} matches no document; sources look like {_choices(distinct.to_pylist())} '
            '(a folder is everything under it; "*" and "**" are wildcards)'
        )
    return pc.is_in(sources, value_set=pa.array(matched, pa.string())).to_numpy(zero_copy_only=False)


def _malformed(pattern: str) -> str | None:
    """What keeps a pattern from meaning anything, where gitwildmatch would just match nothing."""
    if pattern.startswith("!"):
        return "a leading '!' negates; a scope says what to include"
    depth = 0
    for char in pattern:
        depth += char == "["
        depth -= char == "]" and depth > 0
    return "an unclosed '['" if depth else None


def _file_type_matches(types: pa.Array, wanted: ScopeValue) -> np.ndarray:
    kind = str(wanted).strip().lower().removeprefix(".")
    matches = pc.equal(types, kind).to_numpy(zero_copy_only=False)
    if not matches.any():
        present = Counter(types.to_pylist())
        raise ScopeError(
            f'scope "file_type" {wanted!r} matches no document; this index holds {_choices([kind for kind, _ in present.most_common()])}'
        )
    return matches


def _field_matches(metadata: pa.ChunkedArray, key: str, wanted: ScopeValue) -> np.ndarray:
    """Chunks whose document's metadata has `key` equal to `wanted`; each distinct metadata text
    (one per document at most) is parsed once."""
    if isinstance(wanted, dict | list) or wanted is None:
        raise ScopeError(f"scope {key!r} must be a string, number or true/false to compare with; got {_shown(wanted)}")
    encoded = pc.dictionary_encode(metadata.combine_chunks())
    records = [json.loads(text) if text else {} for text in encoded.dictionary.to_pylist()]
    present = [record for record in records if key in record]
    if not present:
        fields = Counter(name for record in records for name in record)
        known = (
            f"metadata fields here: {_choices([name for name, _ in fields.most_common()])}"
            if fields
            else "no document here has metadata"
        )
        raise ScopeError(
            f"scope {key!r} is not a field of this index ({known}; besides {SOURCE!r} and {FILE_TYPE!r}); "
            "use one of those"
        )
    text = _as_text(wanted)
    equal = np.array([key in record and _as_text(record[key]) == text for record in records], dtype=bool)
    if not equal.any():
        values = list(dict.fromkeys(_as_text(record[key]) for record in present))
        raise ScopeError(f"no document has {key} = {_shown(wanted)}; its values include {_choices(values)}")
    return equal[encoded.indices.to_numpy(zero_copy_only=False)]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _choices(values: list[Any]) -> str:
    shown = ", ".join(_shown(value) for value in values[:SHOWN_CHOICES])
    return f"{shown} and {len(values) - SHOWN_CHOICES} more" if len(values) > SHOWN_CHOICES else shown


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:80] + "…"
