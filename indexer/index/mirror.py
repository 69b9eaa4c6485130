"""The mirror: what every keyword search reads, as Arrow files that readers map into memory.

A LanceDB take crosses its event loop and plans a query, which costs about 2 ms however few rows it
reads (bench/README.md), more than the rest of a keyword search. So a local index keeps, beside its
terms and chunks tables, a copy of the terms table's rows and of the chunks' texts and sentence
offsets as Arrow IPC files: a word's postings or a chunk's text is then a slice of a mapped file.
Pages are read as they are touched, so a server's memory grows only by what its searches read.

Each rebuild of the terms table writes a mirror into a folder named by the chunks and terms table
versions (URI/mirror/C-T), before the manifest names those versions. A reader uses the mirror of
the versions its manifest names, and Lance where there is none: an index on an object store, one
built before mirrors, a mirror that cannot be read. After each commit the other mirrors are
removed; a server still reading one keeps its mapping (POSIX), and a folder that cannot be removed
yet (a mapped file on Windows) goes at a later commit.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .catalogue import HELD_COLUMNS, ChunkCatalogue
from .manifest import is_remote
from .reading import scan
from .schema import CHUNKS, TERMS, ChunkColumn, TermColumn, terms_schema
from .vocabulary import TitleWords, Vocabulary

C = ChunkColumn
FOLDER = "mirror"
TERMS_FILE = "terms.arrow"
TEXTS_FILE = "texts.arrow"
NUMBER = "number"
"""The chunk number of each row of the texts file (rows are in the chunks table's scan order)."""
TEXT_COLUMNS = (C.TEXT, C.SENTENCE_STARTS, C.SENTENCE_ENDS)
VOCABULARY_FILE = "vocabulary.arrow"
WORD_ROWS_FILE = "word_rows.arrow"
TITLE_WORDS_FILE = "title_words.arrow"
CATALOGUE_FILE = "catalogue.arrow"
NUMBERS_BY_ID = "numbers_by_id"
"""Beside the catalogue's columns (catalogue.py), by chunk number: the chunk numbers in sorted id order."""
WORD, FIRST_ROW, ROW, OWNER = "word", "first_row", "row", "owner"
TEXT_BATCH_ROWS = 4_096
"""Chunks copied at a time into the texts file: about 20 MB of text."""

log = logging.getLogger(__name__)


def folder_name(tables: dict[str, int]) -> str:
    """The folder of the mirror of these table versions."""
    return f"{tables[CHUNKS]}-{tables[TERMS]}"


@dataclass(frozen=True)
class Postings:
    """Rows of the terms table, flattened: each row's term, how many postings it has, then every
    posting's chunk number and count, row after row."""

    terms: pa.Array
    lengths: np.ndarray
    chunks: np.ndarray
    counts: np.ndarray

    @classmethod
    def of_rows(cls, rows: pa.Table) -> Postings:
        t = TermColumn
        return cls(
            rows[t.TERM].combine_chunks(),
            pc.list_value_length(rows[t.CHUNKS]).to_numpy(zero_copy_only=False).astype(np.int64),
            pc.list_flatten(rows[t.CHUNKS]).to_numpy(zero_copy_only=False),
            pc.list_flatten(rows[t.COUNTS]).to_numpy(zero_copy_only=False),
        )


class _Batches:
    """A mapped file's record batches, and which one holds a row: rows are read from their batch
    (a take on the whole table would first copy every batch into one)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.batches = table.to_batches()
        self.starts = np.cumsum([0] + [batch.num_rows for batch in self.batches])
        """Position of each batch's first row, then the row count."""
        first = self.batches[0].num_rows if self.batches else 0
        alike = {batch.num_rows for batch in self.batches[:-1]} == {first} and self.batches[-1].num_rows <= first
        self.uniform = first if len(self.batches) > 1 and alike else 0
        """The rows of every batch but the last (which has no more), where they are all alike (0: not so)."""

    def place(self, position: int) -> tuple[int, int]:
        """(batch, row in it) of a row: by division where every batch but the last has as many
        rows as the first (as the writer makes them)."""
        if self.uniform:
            return divmod(position, self.uniform)
        owner = int(np.searchsorted(self.starts, position, side="right")) - 1
        return owner, position - int(self.starts[owner])


def _list_parts(batches: list[pa.RecordBatch], column: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per batch, the offsets and the values of a list column, as arrays over the mapped pages."""
    return [b[column].offsets.to_numpy() for b in batches], [b[column].values.to_numpy() for b in batches]


class MappedPostings(_Batches):
    """The terms file: a row's postings are two slices of the mapped pages."""

    def __init__(self, table: pa.Table) -> None:
        super().__init__(table)
        self.terms = [batch[TermColumn.TERM] for batch in self.batches]
        self.offsets, self.chunks = _list_parts(self.batches, TermColumn.CHUNKS)
        self.counts = [batch[TermColumn.COUNTS].values.to_numpy() for batch in self.batches]

    def at(self, positions: np.ndarray) -> Postings:
        """The rows at these positions of the file, in the order given."""
        terms, lengths, chunks, counts = [], [], [], []
        for position in positions.tolist():
            owner, row = self.place(position)
            first, last = int(self.offsets[owner][row]), int(self.offsets[owner][row + 1])
            terms.append(self.terms[owner][row].as_py())
            lengths.append(last - first)
            chunks.append(self.chunks[owner][first:last])
            counts.append(self.counts[owner][first:last])
        return Postings(
            pa.array(terms, pa.string()),
            np.array(lengths, dtype=np.int64),
            np.concatenate([np.zeros(0, dtype=np.int32), *chunks]),
            np.concatenate([np.zeros(0, dtype=np.int32), *counts]),
        )


class MappedTexts(_Batches):
    """The texts file: a chunk's text is decoded from a slice of the mapped pages."""

    def __init__(self, table: pa.Table) -> None:
        super().__init__(table)
        self.positions = np.full(table.num_rows, -1, dtype=np.int64)
        """Row of each chunk number."""
        self.positions[table[NUMBER].to_numpy()] = np.arange(table.num_rows)
        if (self.positions < 0).any():
            raise ValueError("a chunk is missing from it")
        self.text_offsets, self.text_bytes = [], []
        for batch in self.batches:
            texts = batch[C.TEXT]
            _, offsets, data = texts.buffers()
            wide = np.int64 if pa.types.is_large_string(texts.type) else np.int32
            self.text_offsets.append(np.frombuffer(offsets, dtype=wide)[texts.offset : texts.offset + len(texts) + 1])
            self.text_bytes.append(memoryview(data if data is not None else b""))
        self.start_offsets, self.starts_of = _list_parts(self.batches, C.SENTENCE_STARTS)
        self.end_offsets, self.ends_of = _list_parts(self.batches, C.SENTENCE_ENDS)

    def text(self, number: int) -> str:
        owner, row = self.place(int(self.positions[number]))
        offsets = self.text_offsets[owner]
        return str(self.text_bytes[owner][offsets[row] : offsets[row + 1]], "utf-8")

    def texts(self, numbers: np.ndarray) -> pa.Array:
        """The texts of these chunk numbers, in the order given, as one Arrow array."""
        if not len(numbers):
            return pa.array([], pa.string())
        rows = [self.place(int(self.positions[number])) for number in numbers.tolist()]
        return pa.concat_arrays([self.batches[owner][C.TEXT].slice(row, 1) for owner, row in rows])

    def sentence_spans(self, number: int) -> tuple[tuple[int, int], ...]:
        owner, row = self.place(int(self.positions[number]))
        starts = self.starts_of[owner][self.start_offsets[owner][row] : self.start_offsets[owner][row + 1]]
        ends = self.ends_of[owner][self.end_offsets[owner][row] : self.end_offsets[owner][row + 1]]
        return tuple(zip(starts.tolist(), ends.tolist()))


@dataclass(frozen=True)
class Mirror:
    """The mapped files of one build's mirror."""

    postings: MappedPostings
    """The terms table's rows, in its order (terms.py)."""
    texts: MappedTexts
    """Every chunk's text and sentence offsets, by chunk number."""
    vocabulary: Vocabulary
    """Of `postings`, whose positions are its rows."""
    title_words: TitleWords
    catalogue: ChunkCatalogue


def open_mirror(uri: str, tables: dict[str, int], chunk_count: int) -> Mirror | None:
    """The mirror of the build whose manifest names `tables`, mapped; None where there is none
    usable (Lance is read instead)."""
    if is_remote(uri):
        return None
    folder = Path(uri, FOLDER, folder_name(tables))
    if not folder.is_dir():
        return None
    try:
        terms = _mapped(folder / TERMS_FILE)
        texts = _mapped(folder / TEXTS_FILE)
        words, word_rows = _mapped(folder / VOCABULARY_FILE), _mapped(folder / WORD_ROWS_FILE)
        titled, held = _mapped(folder / TITLE_WORDS_FILE), _mapped(folder / CATALOGUE_FILE)
        if (
            terms.schema != terms_schema()
            or texts.num_rows != chunk_count
            or held.num_rows != chunk_count
            or word_rows.num_rows != terms.num_rows
        ):
            raise ValueError("it does not match the tables")
        catalogue = ChunkCatalogue(held.drop_columns([NUMBERS_BY_ID]), _array(held[NUMBERS_BY_ID]).to_numpy())
        vocabulary = Vocabulary(
            _array(words[WORD]), _array(word_rows[ROW]).to_numpy(), _array(words[FIRST_ROW]).to_numpy()
        )
        title_words = TitleWords(_array(titled[WORD]), _array(titled[OWNER]).to_numpy())
        return Mirror(MappedPostings(terms), MappedTexts(texts), vocabulary, title_words, catalogue)
    except (OSError, ValueError, IndexError, KeyError, pa.ArrowException) as exc:
        log.warning("%s: the keyword mirror %s is not used (%s); reading the tables instead", uri, folder.name, exc)
        return None


def _array(column: pa.ChunkedArray) -> pa.Array:
    """A column written as one batch, as that batch's array (no copy)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _write(path: Path, columns: dict[str, pa.Array]) -> None:
    """One table as one batch (a mapped column is then one array, with no copy)."""
    table = pa.table(columns)
    with pa.ipc.new_file(str(path), table.schema) as file:
        file.write_table(table, max_chunksize=max(1, table.num_rows))


def _mapped(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


class MirrorWriter:
    """Writes a build's mirror beside its tables while the terms table is rebuilt (writer.py), then
    names it by the versions written (`finish`). Nothing on an object store."""

    def __init__(self, uri: str) -> None:
        self.folder = None if is_remote(uri) else Path(uri, FOLDER, f".writing-{uuid.uuid4().hex}")
        self._terms: pa.ipc.RecordBatchFileWriter | None = None
        if self.folder is not None:
            self.folder.mkdir(parents=True)
            self._terms = pa.ipc.new_file(str(self.folder / TERMS_FILE), terms_schema())

    def add_terms(self, segment: pa.Table) -> None:
        """Rows appended to the terms table, in the order appended."""
        if self._terms is not None:
            self._terms.write_table(segment)

    def finish(self, chunks: Any, row_ids: np.ndarray, tables: dict[str, int]) -> None:
        """Copy the texts of `chunks` (the table at the version `tables` names; `row_ids`: its
        sorted row ids), then give the mirror the name of `tables`."""
        if self.folder is None or self._terms is None:
            return
        self._terms.close()
        terms = _mapped(self.folder / TERMS_FILE)[TermColumn.TERM]
        vocabulary = Vocabulary.of(terms, np.arange(len(terms)))
        _write(self.folder / VOCABULARY_FILE, {WORD: vocabulary.words, FIRST_ROW: pa.array(vocabulary.starts)})
        _write(self.folder / WORD_ROWS_FILE, {ROW: pa.array(vocabulary.rows)})
        columns = [*TEXT_COLUMNS]
        schema = pa.schema([*(chunks.schema.field(c) for c in columns), pa.field(NUMBER, pa.int64())])
        with pa.ipc.new_file(str(self.folder / TEXTS_FILE), schema) as texts:
            for batch in scan(chunks.search().select(columns).with_row_id(True), TEXT_BATCH_ROWS):
                numbers = np.searchsorted(row_ids, batch["_rowid"].to_numpy())
                values = [
                    pc.fill_null(batch[c], pa.scalar([], batch[c].type)) if c != C.TEXT else batch[c] for c in columns
                ]
                texts.write_batch(pa.record_batch([*values, pa.array(numbers, pa.int64())], schema=schema))
        catalogue = ChunkCatalogue.from_rows(
            scan(chunks.search().select([*HELD_COLUMNS, C.SENTENCE_STARTS]).with_row_id(True)).read_all()
        )
        title_words = TitleWords.of(catalogue.titles)
        _write(self.folder / TITLE_WORDS_FILE, {WORD: title_words.words, OWNER: pa.array(title_words.owners)})
        held = catalogue.table.append_column("_rowid", pa.array(catalogue.row_ids))
        _write(
            self.folder / CATALOGUE_FILE,
            {**dict(zip(held.column_names, held.columns)), NUMBERS_BY_ID: pa.array(catalogue.numbers_by_id)},
        )
        named = self.folder.with_name(folder_name(tables))
        shutil.rmtree(named, ignore_errors=True)
        os.replace(self.folder, named)
        self.folder = None

    def abandon(self) -> None:
        if self._terms is not None:
            self._terms.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def mirror_writer(uri: str) -> Iterator[MirrorWriter]:
    """A MirrorWriter whose folder is removed unless it was finished."""
    writer = MirrorWriter(uri)
    try:
        yield writer
    finally:
        writer.abandon()


def mirror_committed(uri: str, tables: dict[str, int]) -> bool:
    """Write the mirror of the committed build that names `tables` where it has none (a build made
    before mirrors, or one whose mirror was lost); whether one was written. Run under the build lock."""
    if is_remote(uri) or Path(uri, FOLDER, folder_name(tables)).is_dir():
        return False
    from .store import connect

    db = connect(uri)
    chunks, terms = db.open_table(CHUNKS), db.open_table(TERMS)
    chunks.checkout(tables[CHUNKS])
    terms.checkout(tables[TERMS])
    row_ids = np.sort(scan(chunks.search().select([]).with_row_id(True)).read_all()["_rowid"].to_numpy())
    with mirror_writer(uri) as writer:
        for batch in scan(terms.search().select(terms_schema().names)):
            writer.add_terms(pa.Table.from_batches([batch]))
        writer.finish(chunks, row_ids, tables)
    remove_others(uri, tables)
    return True


def remove_others(uri: str, tables: dict[str, int]) -> None:
    """Remove every mirror but that of `tables`, as far as the system lets (see the module's docstring)."""
    root = Path(uri, FOLDER)
    if is_remote(uri) or not root.is_dir():
        return
    kept = folder_name(tables)
    for folder in root.iterdir():
        if folder.name != kept:
            shutil.rmtree(folder, ignore_errors=True)
