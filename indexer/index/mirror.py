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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .manifest import is_remote
from .reading import scan
from .schema import CHUNKS, TERMS, ChunkColumn, TermColumn, terms_schema

C = ChunkColumn
FOLDER = "mirror"
TERMS_FILE = "terms.arrow"
TEXTS_FILE = "texts.arrow"
NUMBER = "number"
"""The chunk number of each row of the texts file (rows are in the chunks table's scan order)."""
TEXT_COLUMNS = (C.TEXT, C.SENTENCE_STARTS, C.SENTENCE_ENDS)
TEXT_BATCH_ROWS = 4_096
"""Chunks copied at a time into the texts file: about 20 MB of text."""

log = logging.getLogger(__name__)


def folder_name(tables: dict[str, int]) -> str:
    """The folder of the mirror of these table versions."""
    return f"{tables[CHUNKS]}-{tables[TERMS]}"


class MappedRows:
    """A mapped file's rows, taken by position batch by batch: a take on the whole table would
    first copy every batch into one."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.batches = table.to_batches()
        self.starts = np.cumsum([0] + [batch.num_rows for batch in self.batches])
        """Position of each batch's first row, then the row count."""

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def take(self, positions: np.ndarray, columns: Iterable[str] | None = None) -> pa.Table:
        """The rows at `positions`, in the order given (of `columns`; None: all)."""
        positions = np.asarray(positions, dtype=np.int64)
        names = self.table.schema.names if columns is None else list(columns)
        if not len(positions):
            return self.table.select(names).schema.empty_table()
        owners = np.searchsorted(self.starts, positions, side="right") - 1
        order = np.argsort(owners, kind="stable")
        parts = []
        for owner in np.unique(owners).tolist():
            inside = positions[order[owners[order] == owner]] - self.starts[owner]
            parts.append(self.batches[owner].select(names).take(pa.array(inside)))
        rows = pa.Table.from_batches(parts).combine_chunks()
        back = np.empty(len(order), dtype=np.int64)
        back[order] = np.arange(len(order))
        return rows.take(pa.array(back))


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


class MappedPostings:
    """The terms file's postings as arrays over the mapped pages: a row's postings are two slices."""

    def __init__(self, rows: MappedRows) -> None:
        t = TermColumn
        self.rows = rows
        self.terms = [batch[t.TERM] for batch in rows.batches]
        self.offsets = [batch[t.CHUNKS].offsets.to_numpy() for batch in rows.batches]
        self.chunks = [batch[t.CHUNKS].values.to_numpy() for batch in rows.batches]
        self.counts = [batch[t.COUNTS].values.to_numpy() for batch in rows.batches]

    def at(self, positions: np.ndarray) -> Postings:
        """The rows at these positions of the file, in the order given."""
        owners = np.searchsorted(self.rows.starts, positions, side="right") - 1
        terms, lengths, chunks, counts = [], [], [], []
        for owner, position in zip(owners.tolist(), positions.tolist()):
            inside = position - int(self.rows.starts[owner])
            first, last = int(self.offsets[owner][inside]), int(self.offsets[owner][inside + 1])
            terms.append(self.terms[owner][inside].as_py())
            lengths.append(last - first)
            chunks.append(self.chunks[owner][first:last])
            counts.append(self.counts[owner][first:last])
        return Postings(
            pa.array(terms, pa.string()),
            np.array(lengths, dtype=np.int64),
            np.concatenate([np.zeros(0, dtype=np.int32), *chunks]),
            np.concatenate([np.zeros(0, dtype=np.int32), *counts]),
        )


@dataclass(frozen=True)
class Mirror:
    """The mapped files of one build's mirror."""

    terms: MappedRows
    """The terms table's rows, in its order (terms.py)."""
    postings: MappedPostings
    texts: MappedRows
    """Every chunk's text and sentence offsets (TEXT_COLUMNS), in the order of `positions`."""
    positions: np.ndarray
    """Row of `texts` by chunk number."""

    def texts_at(self, numbers: np.ndarray, columns: Iterable[str]) -> pa.Table:
        """These chunks' rows of `columns`, in the order given."""
        return self.texts.take(self.positions[numbers], columns)


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
        numbers = texts[NUMBER].to_numpy()
        if terms.schema != terms_schema() or len(numbers) != chunk_count:
            raise ValueError("it does not match the tables")
        positions = np.full(chunk_count, -1, dtype=np.int64)
        positions[numbers] = np.arange(chunk_count)
        if (positions < 0).any():
            raise ValueError("a chunk is missing from it")
    except (OSError, ValueError, IndexError, pa.ArrowException) as exc:
        log.warning("%s: the keyword mirror %s is not used (%s); reading the tables instead", uri, folder.name, exc)
        return None
    rows = MappedRows(terms)
    return Mirror(rows, MappedPostings(rows), MappedRows(texts.drop_columns([NUMBER])), positions)


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
        columns = [*TEXT_COLUMNS]
        schema = pa.schema([*(chunks.schema.field(c) for c in columns), pa.field(NUMBER, pa.int64())])
        with pa.ipc.new_file(str(self.folder / TEXTS_FILE), schema) as texts:
            for batch in scan(chunks.search().select(columns).with_row_id(True), TEXT_BATCH_ROWS):
                numbers = np.searchsorted(row_ids, batch["_rowid"].to_numpy())
                texts.write_batch(
                    pa.record_batch([*(batch[c] for c in columns), pa.array(numbers, pa.int64())], schema=schema)
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


def remove_others(uri: str, tables: dict[str, int]) -> None:
    """Remove every mirror but that of `tables`, as far as the system lets (see the module's docstring)."""
    root = Path(uri, FOLDER)
    if is_remote(uri) or not root.is_dir():
        return
    kept = folder_name(tables)
    for folder in root.iterdir():
        if folder.name != kept:
            shutil.rmtree(folder, ignore_errors=True)
