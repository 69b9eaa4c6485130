"""Records: `.json` (a list of records, an object holding one list of records, or one record) and
`.jsonl` (one record a line, streamed).

A record is ``{"text": ..., "title"?: ..., "id"?: ..., ...}``: "contents", "content" or "body"
stand in for a missing "text" and "_id" for a missing "id"; every other field (and each field of a
nested "metadata" object) is kept as metadata. Records with empty text are skipped silently.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from datetime import date, datetime

from .document import BINARY_SNIFF_CHARS, Document, FileInput, Metadata, Skip, SkippedFile, check_text
from .outline import NotReadable, composed

TEXT_FIELDS = ("text", "contents", "content", "body")
ID_FIELDS = ("id", "_id")
MAX_NESTING = 100
"""Lists and objects nested deeper in a record or in front matter are not read: records hold a few
levels, and turning a value into metadata recurses once per level."""


class NotRecords(Exception):
    """A `.json` file whose data is not records (a list of records, an object holding one such list,
    or one record): a configuration file, read as one (code.py)."""


def read_json(input: FileInput, skipped: list[SkippedFile]) -> Iterator[Document]:
    source, file = input.source, input.file
    raw = input.read_bytes()
    try:
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise Skip(f"line {line}: not UTF-8 text; save the file as UTF-8") from None
    check_text(content[:BINARY_SNIFF_CHARS])
    if not content.strip():
        return
    data = parse_json(content, "fix the file")
    for index, record in enumerate(_record_list(data)):
        try:
            document = record_document(record, source, f"{file}#{index}", f"item {index}", file)
        except Skip as reason:
            skipped.append(SkippedFile(source, str(reason), file))
            continue
        if document:
            yield document


def parse_json(content: str, fix: str, line: int | None = None) -> object:
    """Parsed JSON; `line` numbers the content where it is one line of a file."""
    try:
        return json.loads(content, parse_int=_json_int)
    except json.JSONDecodeError as error:
        where = f"line {line or error.lineno}"
        raise Skip(f"{where}: invalid JSON ({error.msg}: column {error.colno}); {fix}") from None
    except RecursionError:
        where = f"line {line}: " if line else ""
        raise Skip(f"{where}JSON nested too deeply to read; {fix}") from None


def _json_int(digits: str) -> int | str:
    """An integer of JSON; one of more digits than Python converts (sys.get_int_max_str_digits) stays text."""
    return int(digits) if len(digits) <= sys.get_int_max_str_digits() else digits


def _record_list(data: object) -> list[object]:
    """The records of a `.json` file: a list, the one list inside an object, or a single record."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if any(name in data for name in TEXT_FIELDS):
            return [data]
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) == 1:
            return lists[0]
    raise NotRecords("not records")


def read_jsonl(input: FileInput, skipped: list[SkippedFile]) -> Iterator[Document]:
    """Records of a JSON Lines file, read one line at a time; a bad line is skipped and listed."""
    source, file = input.source, input.file
    with input.open() as handle:
        check_text(handle.read(BINARY_SNIFF_CHARS).decode("utf-8", errors="ignore"))
        handle.seek(0)
        for line_number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8-sig")
                if not line.strip():
                    continue
                record = parse_json(line, "fix the line or remove it", line_number)
                document = record_document(record, source, f"{file}:{line_number}", f"line {line_number}", file)
            except UnicodeDecodeError:
                skipped.append(SkippedFile(source, f"line {line_number}: not UTF-8 text; save the file as UTF-8", file))
                continue
            except Skip as reason:
                skipped.append(SkippedFile(source, str(reason), file))
                continue
            if document:
                yield document


def record_document(record: object, source: str, default_id: str, where: str, file: str) -> Document | None:
    """One record as a document; None when its text is empty."""
    if not isinstance(record, dict):
        raise Skip(f'{where}: a record must be a JSON object like {{"text": ...}}; fix or remove it')
    try:
        check_nesting(record, "record", "flatten it or remove it")
    except NotReadable as error:
        raise Skip(f"{where}: {error}") from None
    text_field = next((name for name in TEXT_FIELDS if name in record), None)
    if text_field is None:
        raise Skip(f'{where}: record has no "text" field; add one (or "content"/"body")')
    text = record[text_field]
    if not isinstance(text, str):
        raise Skip(f'{where}: "{text_field}" must be a string; quote it or fix the record')
    if not text.strip():
        return None
    id_field = next((name for name in ID_FIELDS if record.get(name) not in (None, "")), None)
    title = record.get("title")
    return Document(
        doc_id=str(record[id_field]) if id_field else default_id,
        title=composed(str(title)) if title is not None else "",
        source=source,
        text=composed(text),
        metadata=metadata_of(record, {text_field, "title", *ID_FIELDS}),
        path=file,
    )


def check_nesting(value: object, what: str, fix: str) -> None:
    """NotReadable where lists and objects nest in `value` deeper than MAX_NESTING, found without recursion."""
    waiting = [(value, 0)]
    while waiting:
        item, depth = waiting.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list | tuple | set | frozenset):
            children = item
        else:
            continue
        if depth >= MAX_NESTING:
            raise NotReadable(f"{what} nested more than {MAX_NESTING} levels deep; {fix}")
        waiting.extend((child, depth + 1) for child in children)


def metadata_of(record: dict[str, object], used: set[str]) -> Metadata:
    """The record's other fields, a nested "metadata" object flattened in; non-scalars JSON-encoded."""
    nested = record.get("metadata")
    fields = dict(nested) if isinstance(nested, dict) else {}
    fields.update(
        (key, value)
        for key, value in record.items()
        if key not in used and not (key == "metadata" and isinstance(value, dict))
    )
    plain = {str(key): _json_ready(value) for key, value in fields.items()}
    return {
        key: value
        if value is None or isinstance(value, str | int | float | bool)
        else json.dumps(value, ensure_ascii=False)
        for key, value in plain.items()
    }


def _json_ready(value: object) -> object:
    """`value` with what YAML front matter adds to JSON's types made JSON's: dates and times as ISO
    text, keys as text, sets as sorted lists, bytes and anything else as its text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(_json_ready(key)): _json_ready(item) for key, item in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_json_ready(item) for item in value), key=str)
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    return str(value)
