"""Scopes: the part of the index a search runs in, resolved once per call to a mask over chunk numbers.

A scope is an object of conditions, all of which a chunk's document must meet:

- "source": a gitignore-style pattern (pathspec's gitwildmatch, as `--exclude` uses) matched
  against the document's source as results show it: "docs/guide" is that folder (or file) and
  everything under it, "*.md" every Markdown file at any depth, "docs/**/api-*.html" what it says;
- "file_type": what the document was read as ("md", "html", "pdf", "jsonl", ...);
- "title": the document's title, compared as keywords are (folded words: case, accents, width and
  the punctuation between words do not matter), so a search can stay inside one page;
- "document": one document, by its ref (the chunk id before "-", or a chunk id), its id (a record's
  id, a file's path) or its source as results show it;
- any other key: a metadata field of the document's record, equal to the value given (a number or
  true/false also matches its text, so 1898 and "1898" are the same).

Searches apply the mask inside their ranking, so a scoped search returns the top k within the
scope. A scope that cannot match (an unknown field, a malformed pattern, no such document) is a
ScopeError whose one line names the problem and lists what the index does hold. A scope's cost is
bounded before any work: at most MAX_SCOPE_CONDITIONS conditions, keys and values of at most
MAX_SCOPE_CHARS characters, source patterns checked and matched in linear time (source_patterns.py).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from arag_mcp.indexer.index.ids import parse_chunk_id
from arag_mcp.indexer.index.keywords import fold, lower, words_of
from arag_mcp.indexer.index.schema import ChunkColumn

from . import source_patterns
from .limits import MAX_SCOPE_CHARS, MAX_SCOPE_CONDITIONS, quoted

if TYPE_CHECKING:
    from arag_mcp.indexer.index.snapshot import IndexSnapshot

SOURCE = "source"
FILE_TYPE = "file_type"
TITLE = "title"
DOCUMENT = "document"
KEYS = (SOURCE, FILE_TYPE, TITLE, DOCUMENT)
"""The scope keys every index has; any other is a metadata field."""
SHOWN_CHOICES = 6
"""How many valid sources, types, fields or values an error lists."""
ScopeValue = str | int | float | bool


DIGITS_PER_BIT = 0.30103
MAX_SCOPE_NUMBER_BITS = int(MAX_SCOPE_CHARS / DIGITS_PER_BIT)
"""A whole number of more than MAX_SCOPE_CHARS digits is refused before Python is asked to write it
out (which it refuses above 4,300 digits)."""


class ScopeError(ValueError):
    """A scope that selects nothing, or cannot be read; the message names the fix."""


def in_scope(snapshot: IndexSnapshot, scope: dict[str, ScopeValue] | None) -> np.ndarray | None:
    """The chunk numbers a scope admits, as a boolean mask (None: no scope, every chunk)."""
    if not scope:
        return None
    _check_size(scope)
    labels = snapshot.catalogue.labels
    mask = np.ones(labels.num_rows, dtype=bool)
    metadata = None
    for key, wanted in scope.items():
        if key == SOURCE:
            mask &= _source_matches(labels[ChunkColumn.SOURCE], wanted)
        elif key == FILE_TYPE:
            mask &= _file_type_matches(labels[ChunkColumn.FILE_TYPE], wanted)
        elif key == TITLE:
            mask &= _title_matches(snapshot.catalogue.titles, wanted)
        elif key == DOCUMENT:
            mask &= _document_matches(snapshot, wanted)
        else:
            metadata = metadata or _metadata_records(labels[ChunkColumn.METADATA])
            mask &= _field_matches(metadata, key, wanted)
    if not mask.any():
        raise ScopeError(
            f"no document meets every condition of the scope {quoted(scope)} (each matches some document); "
            "drop or change a condition"
        )
    return mask


def _check_size(scope: dict[str, ScopeValue]) -> None:
    """A scope's conditions are few and short: more is refused before any work, whose cost grows
    with each condition and the length of its text."""
    if len(scope) > MAX_SCOPE_CONDITIONS:
        raise ScopeError(
            f"the scope has {len(scope)} conditions; give at most {MAX_SCOPE_CONDITIONS}, "
            'e.g. {"source": "docs/guide", "year": 2024}'
        )
    for key, value in scope.items():
        if len(key) > MAX_SCOPE_CHARS:
            raise ScopeError(
                f"a scope key has {len(key)} characters ({quoted(key)}); keys are {', '.join(map(repr, KEYS))} "
                f"or a metadata field name of at most {MAX_SCOPE_CHARS}"
            )
        if isinstance(value, str) and len(value) > MAX_SCOPE_CHARS:
            raise ScopeError(
                f"scope {quoted(key)} has {len(value)} characters ({quoted(value)}); "
                f'give at most {MAX_SCOPE_CHARS}: a folder, a file, a pattern like "docs/*.md" or a value'
            )
        if isinstance(value, int) and value.bit_length() > MAX_SCOPE_NUMBER_BITS:
            raise ScopeError(
                f"scope {quoted(key)} is a number of about {round(value.bit_length() * DIGITS_PER_BIT)} digits; "
                f"give a value of at most {MAX_SCOPE_CHARS} characters"
            )


def _source_matches(sources: pa.Array, pattern: ScopeValue) -> np.ndarray:
    if not isinstance(pattern, str) or not pattern.strip():
        raise ScopeError(
            f'scope "source" must be a path or pattern such as "docs/guide" or "*.md"; got {quoted(pattern)}'
        )
    pattern = pattern.strip().removeprefix("./")
    problem = source_patterns.problem(pattern)
    if problem:
        raise ScopeError(f'scope "source" {quoted(pattern)} {problem}')
    distinct = pc.unique(sources)
    matched = pc.filter(distinct, source_patterns.matches(distinct, pattern))
    if not len(matched):
        raise ScopeError(
            f'scope "source" {quoted(pattern)} matches no document; sources look like {_choices(distinct.to_pylist())} '
            '(a folder is everything under it; "*" and "**" are wildcards)'
        )
    return pc.is_in(sources, value_set=matched).to_numpy(zero_copy_only=False)


def _file_type_matches(types: pa.Array, wanted: ScopeValue) -> np.ndarray:
    kind = str(wanted).strip().lower().removeprefix(".")
    matches = pc.equal(types, kind).to_numpy(zero_copy_only=False)
    if not matches.any():
        present = Counter(types.to_pylist())
        raise ScopeError(
            f'scope "file_type" {quoted(wanted)} matches no document; this index holds {_choices([kind for kind, _ in present.most_common()])}'
        )
    return matches


def _title_matches(titles: pa.Array, wanted: ScopeValue) -> np.ndarray:
    if not isinstance(wanted, str) or not _folded_words(wanted):
        raise ScopeError(f'scope "title" must be a page\'s title, e.g. "Marie Curie"; got {quoted(wanted)}')
    target = _folded_words(wanted)
    encoded = pc.dictionary_encode(titles)
    distinct = encoded.dictionary.to_pylist()
    equal = np.array([_folded_words(title) == target for title in distinct], dtype=bool)
    if not equal.any():
        near = [title for title in distinct if set(_folded_words(title)) & set(target)]
        raise ScopeError(
            f"no document is titled {quoted(wanted)}; titles here include {_choices(near or distinct)} "
            "(a title is matched whole, ignoring case and accents)"
        )
    return equal[encoded.indices.to_numpy(zero_copy_only=False)]


def _folded_words(text: str) -> list[str]:
    return [fold(word) for word in words_of(lower(pa.array([text], pa.string())).to_pylist())[0]]


def _document_matches(snapshot: IndexSnapshot, wanted: ScopeValue) -> np.ndarray:
    if not isinstance(wanted, str) or not wanted.strip():
        raise ScopeError(
            f'scope "document" must be a ref from the results (the chunk id before "-"), a document id or a source; got {quoted(wanted)}'
        )
    wanted = wanted.strip()
    labels, table = snapshot.catalogue.labels, snapshot.catalogue.table
    parsed = parse_chunk_id(wanted)
    key = parsed[0] if parsed else wanted
    mask = pc.equal(labels[ChunkColumn.DOC_KEY], key).to_numpy(zero_copy_only=False)
    for column in (table[ChunkColumn.DOC_ID], labels[ChunkColumn.SOURCE]):
        mask |= pc.fill_null(pc.equal(column, wanted), False).to_numpy(zero_copy_only=False)
    if not mask.any():
        refs = pc.unique(labels[ChunkColumn.DOC_KEY]).to_pylist()
        raise ScopeError(
            f'scope "document" {quoted(wanted)} is no document here; give a ref from the results '
            f'(the chunk id before "-", such as {_choices(refs[:2])}), a document id or a source'
        )
    return mask


MetadataRecords = tuple[list[dict[str, Any]], np.ndarray]
"""Each distinct metadata text parsed (one per document at most), and each chunk's record in it."""


def _metadata_records(metadata: pa.ChunkedArray) -> MetadataRecords:
    encoded = pc.dictionary_encode(metadata.combine_chunks())
    records = [json.loads(text) if text else {} for text in encoded.dictionary.to_pylist()]
    return records, encoded.indices.to_numpy(zero_copy_only=False)


def _field_matches(metadata: MetadataRecords, key: str, wanted: ScopeValue) -> np.ndarray:
    """Chunks whose document's metadata has `key` equal to `wanted`."""
    if isinstance(wanted, dict | list) or wanted is None:
        raise ScopeError(
            f"scope {quoted(key)} must be a string, number or true/false to compare with; got {quoted(wanted)}"
        )
    records, rows = metadata
    present = [record for record in records if key in record]
    if not present:
        fields = Counter(name for record in records for name in record)
        known = (
            f"the metadata fields {_choices([name for name, _ in fields.most_common()])}"
            if fields
            else "no metadata field (no document here has metadata)"
        )
        raise ScopeError(
            f"scope {quoted(key)} is not a key of this index; its keys are {', '.join(map(repr, KEYS))} and {known}"
        )
    text = _as_text(wanted)
    equal = np.array([key in record and _as_text(record[key]) == text for record in records], dtype=bool)
    if not equal.any():
        values = list(dict.fromkeys(_as_text(record[key]) for record in present))
        raise ScopeError(f"no document has {quoted(key)} = {quoted(wanted)}; its values include {_choices(values)}")
    return equal[rows]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _choices(values: list[Any]) -> str:
    shown = ", ".join(quoted(value) for value in values[:SHOWN_CHOICES])
    return f"{shown} and {len(values) - SHOWN_CHOICES} more" if len(values) > SHOWN_CHOICES else shown
