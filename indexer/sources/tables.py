"""Tables: `.csv` and `.tsv` files, the header row naming the fields and each data row a record.

A row is read as a JSON Lines record is (records.py): its "text" column ("contents", "content" or
"body") is the text, "title" the title, "id" ("_id") the id, and every other field metadata that
scopes select by; these names match whatever their case ("Title"). In a table without a text
column, the text is the row's "field: value" lines and every field is metadata too. Empty cells are
left out, as a record leaves out a field it lacks. A `.csv` whose header holds semicolons and no
comma (as spreadsheets in many locales write) is read as semicolon-separated.

The file is streamed: its encoding is chosen first, in one pass over its bytes, as `decode`
chooses it (UTF-8 where the whole file is UTF-8, else latin-1).
"""

from __future__ import annotations

import codecs
import csv
import io
from collections import Counter
from collections.abc import Iterator
from typing import BinaryIO, TextIO

from .document import BINARY_SNIFF_CHARS, INDEXED, Document, FileInput, Skip, SkippedFile, check_text
from .outline import composed
from .records import ID_FIELDS, TEXT_FIELDS, record_document

MAX_ROWS = 100_000
"""The most rows read from one table: each row is a document, embedded on its own, so a table of
more is an export of data (a log, measurements) rather than passages to search and would hold a
build for hours. Its first rows are indexed, and one line says how many were left."""
MAX_FIELD_CHARS = 1_000_000
"""The longest field read: a cell holds a value or a passage, while a quote left open runs on as one
field to the end of the file. csv enforces it: its limit, which is the whole process's, is raised to
this where lower and never lowered."""
RECORD_FIELDS = frozenset({*TEXT_FIELDS, *ID_FIELDS, "title"})
"""Column names that have a record's meaning, matched whatever their case."""
_BLOCK = 1 << 20


def read_table(input: FileInput, skipped: list[SkippedFile]) -> Iterator[Document]:
    """A table's rows as records; a bad row is skipped and listed, rows past MAX_ROWS only counted."""
    if csv.field_size_limit() < MAX_FIELD_CHARS:
        csv.field_size_limit(MAX_FIELD_CHARS)
    with input.open() as handle:
        encoding = _encoding(handle)
        start = handle.read(BINARY_SNIFF_CHARS).decode(encoding, errors="ignore")
        check_text(start)
        handle.seek(0)
        text = io.TextIOWrapper(handle, encoding=encoding, newline="")
        rows = _rows(text, _delimiter(input.suffix, start))
        header = _header(rows)
        count = 0
        for line, row in rows:
            count += 1
            if count > MAX_ROWS:
                continue
            try:
                document = _row_document(header, row, input, line)
            except Skip as reason:
                skipped.append(SkippedFile(input.source, str(reason), input.file))
                continue
            if document:
                yield document
    if count > MAX_ROWS:
        skipped.append(
            SkippedFile(
                input.source,
                f"{INDEXED}first {MAX_ROWS:,} rows of {count:,}; split the file to index the rest",
                input.file,
            )
        )


def _encoding(handle: BinaryIO) -> str:
    """`decode`'s choice without holding the file: UTF-8 (a byte-order mark dropped) where the whole
    file is UTF-8, else latin-1."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            decoder.decode(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return "latin-1"
    finally:
        handle.seek(0)
    return "utf-8-sig"


def _delimiter(suffix: str, start: str) -> str:
    if suffix == ".tsv":
        return "\t"
    header = start.split("\n", 1)[0]
    return ";" if ";" in header and "," not in header else ","


def _rows(text: TextIO, delimiter: str) -> Iterator[tuple[int, list[str] | Skip]]:
    """(line where each row begins, its fields or why they cannot be read); rows of blank fields left out."""
    reader = csv.reader(text, delimiter=delimiter)
    read_to = 0
    while True:
        try:
            row: list[str] | Skip = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            row = Skip(f"line {read_to + 1}: unreadable row ({error}); close a quote left open, or fix the row")
        line, read_to = read_to + 1, reader.line_num
        if isinstance(row, Skip) or any(field.strip() for field in row):
            yield line, row


def _header(rows: Iterator[tuple[int, list[str] | Skip]]) -> list[str]:
    """The field names of the first row: record names in lower case, an unnamed column "column <n>"."""
    line, row = next(rows, (0, []))
    if isinstance(row, Skip):
        raise row
    names = [_field_name(name, number) for number, name in enumerate(row, 1)]
    repeated = [name for name, times in Counter(names).items() if times > 1]
    if repeated:
        raise Skip(
            f'line {line}: repeated column name ("{repeated[0]}" names two columns); '
            "rename one so each field has its own name"
        )
    return names


def _field_name(name: str, number: int) -> str:
    name = composed(name.strip())
    if not name:
        return f"column {number}"
    return name.lower() if name.lower() in RECORD_FIELDS else name


def _row_document(header: list[str], row: list[str] | Skip, input: FileInput, line: int) -> Document | None:
    """A row as the record of its fields (records.record_document); None where its text is empty."""
    if isinstance(row, Skip):
        raise row
    if len(row) != len(header):
        raise Skip(
            f"line {line}: wrong number of fields ({len(row)}, the header row has {len(header)}); "
            "quote fields that hold the separator, or fix the row"
        )
    fields = dict(zip(header, map(composed, row)))
    text_field = next((name for name in TEXT_FIELDS if name in fields), None)
    record = {name: value for name, value in fields.items() if value.strip() or name == text_field}
    if text_field is None:
        record["text"] = "\n".join(f"{name}: {value}" for name, value in record.items())
    return record_document(record, input.source, f"{input.file}:{line}", f"line {line}", input.file)
