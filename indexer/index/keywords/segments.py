"""Keyword segments: the postings, texts and held columns of a set of chunks, as Arrow files.

A LanceDB take crosses its event loop and plans a query, which costs about 2 ms however few rows it
reads (bench/README.md), more than the rest of a keyword search. So the chunks' words, texts and
describing columns are kept as Arrow IPC files: a word's postings or a chunk's text is one read of
a slice of a file (pread). The files are not read through a memory map, because a mapped file cut
short under a reader (a copy of another index over this one) kills the reader with SIGBUS; a read
finds it short and says so (SegmentChanged), and each file's size is checked against what the
manifest recorded before it is opened. The small files are read whole into memory, and their
checksum checked as they are read; the large ones (postings, texts) are read slice by slice, so
their checksums are checked once per reader, off the path of a search (`Segment.verify`): a file
written over with other bytes of the same size is then refused from that point on.

A commit writes one segment holding the chunks it added, never touching the others, so an edit
costs what it changes. A segment is immutable once named: the chunks it holds are numbered from 0
in the order written (its local numbers), and a chunk removed later is recorded in a file of dead
numbers beside it (segment_store.DEAD_PREFIX), which the manifest names. Segments are merged by a size-tiered
policy (segment_writer.py); a reader numbers the live chunks of all segments densely
(segment_set.py).

Files of a segment folder::

    terms.arrow        one row per word or marked token (terms.py): its chunks (local numbers) and counts
    vocabulary.arrow   the distinct terms, sorted, and where each one's rows begin in word_rows.arrow
    word_rows.arrow    the rows of terms.arrow grouped by term
    texts.arrow        every chunk's text and sentence offsets, by local number
    title_words.arrow  the folded words of every title, sorted, with their chunk's local number
    catalogue.arrow    the held columns (catalogue.py) by local number, and the numbers in id order
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..catalogue import HELD_COLUMNS, SENTENCE_COUNT, ChunkCatalogue
from ..errors import IndexStoreError
from ..schema import ChunkColumn
from .terms import SEGMENT_POSTINGS, TermColumn, invert, terms_schema
from .vocabulary import TitleWords, Vocabulary

TERMS_FILE = "terms.arrow"
TEXTS_FILE = "texts.arrow"
VOCABULARY_FILE = "vocabulary.arrow"
WORD_ROWS_FILE = "word_rows.arrow"
TITLE_WORDS_FILE = "title_words.arrow"
CATALOGUE_FILE = "catalogue.arrow"
FILES = (TERMS_FILE, TEXTS_FILE, VOCABULARY_FILE, WORD_ROWS_FILE, TITLE_WORDS_FILE, CATALOGUE_FILE)
NUMBERS_BY_ID = "numbers_by_id"
"""Beside the catalogue's columns, by local number: the local numbers in sorted id order."""
TEXT_COLUMNS = (ChunkColumn.TEXT, ChunkColumn.SENTENCE_STARTS, ChunkColumn.SENTENCE_ENDS)
SEGMENT_COLUMNS = (*HELD_COLUMNS, *TEXT_COLUMNS, ChunkColumn.TERMS, ChunkColumn.TERM_COUNTS)
"""The chunk columns a segment is written from."""
WORD, FIRST_ROW, ROW, OWNER, NUMBER = "word", "first_row", "row", "owner", "number"
TEXT_BATCH_ROWS = 4_096
"""Chunks copied at a time into a texts file: about 20 MB of text."""
CHECKSUM_READ = 4 << 20
"""Bytes read at a time to check a file's checksum."""


@dataclass(frozen=True)
class Postings:
    """Rows of a terms file, flattened: each row's term, how many postings it has, then every
    posting's chunk number and count, row after row."""

    terms: pa.Array
    lengths: np.ndarray
    chunks: np.ndarray
    counts: np.ndarray

    @classmethod
    def concatenated(cls, parts: Sequence[Postings]) -> Postings:
        if len(parts) == 1:
            return parts[0]
        return cls(
            pa.concat_arrays([pa.array([], pa.string()), *(part.terms for part in parts)]),
            np.concatenate([np.zeros(0, dtype=np.int64), *(part.lengths for part in parts)]),
            np.concatenate([np.zeros(0, dtype=np.int64), *(part.chunks for part in parts)]),
            np.concatenate([np.zeros(0, dtype=np.int32), *(part.counts for part in parts)]),
        )


class SegmentChanged(IndexStoreError):
    """A segment file no longer holds what was opened: it was cut short or written over."""


def _rewrite_advice(index: str | None) -> str:
    command = f"`arag-index sync --index {index}`" if index else "`arag-index sync` on the index"
    return f"{command} writes the keyword segments again from the index's tables"


class _File:
    """A segment file, its size checked against what its commit recorded, read through pread.

    A mapped page past the end of a file that was cut short (`cp` of an index over a served one)
    is SIGBUS, which kills the process; a read through pread finds the file short and says so. The
    file is mapped once, at open, for its metadata alone: where each buffer lies in the file."""

    def __init__(self, path: Path, size: int | None, checksum: str | None = None, index: str | None = None) -> None:
        self.path = path
        self.index = index
        """The index's URI, to name in the advice of a refusal."""
        self.size = path.stat().st_size
        if size is not None and self.size != size:
            raise ValueError(f"{path.name} is {self.size} bytes, not the {size} written")
        self.checksum = checksum
        """CRC-32 of the bytes written, as the manifest records it (None: not recorded)."""
        self._handle = path.open("rb", buffering=0)
        self._lock = threading.Lock()
        self.refused: str | None = None
        """Why this file is no longer read (its checksum did not match), once found."""

    def whole(self) -> bytes:
        """The file's bytes, its checksum checked."""
        data = self.read(0, self.size)
        self._check(zlib.crc32(data))
        return data

    def verify(self) -> None:
        """Read the file through and check its checksum: SegmentChanged where it does not match,
        and every later read of the file is refused."""
        self._check(self.crc())

    def crc(self) -> int:
        """The CRC-32 of the file's bytes, read through CHECKSUM_READ at a time."""
        crc = 0
        for offset in range(0, self.size, CHECKSUM_READ):
            crc = zlib.crc32(self.read(offset, min(CHECKSUM_READ, self.size - offset)), crc)
        return crc

    def _check(self, crc: int) -> None:
        if self.checksum is not None and f"{crc:08x}" != self.checksum:
            raise self.refuse()

    def refuse(self) -> SegmentChanged:
        """Refuse every later read of the file: it does not hold what was written."""
        self.refused = f"the keyword segment file {self.path.name} does not hold what was written; " + _rewrite_advice(
            self.index
        )
        return SegmentChanged(self.refused)

    def batches(self) -> tuple[list[pa.RecordBatch], int]:
        """The file's batches, mapped, and the address its first byte is mapped at: to find where a
        buffer lies (`Slices.of`). Only metadata is read through them."""
        with pa.memory_map(str(self.path)) as source:
            base = source.read_buffer(1).address if source.size() else 0
            reader = pa.ipc.open_file(source)
            return [reader.get_batch(at) for at in range(reader.num_record_batches)], base

    def read(self, offset: int, length: int) -> bytes:
        if self.refused is not None:
            raise SegmentChanged(self.refused)
        if hasattr(os, "pread"):
            data = os.pread(self._handle.fileno(), length, offset)
        else:  # Windows, where a mapped file cannot be cut short
            with self._lock:
                self._handle.seek(offset)
                data = self._handle.read(length)
        if len(data) != length:
            raise SegmentChanged(
                f"the keyword segment file {self.path.name} was cut short or written over after it was opened; "
                + _rewrite_advice(self.index)
            )
        return data


@dataclass(frozen=True)
class Slices:
    """One buffer of a segment file, by where it lies: a slice of it is read from the file."""

    file: _File
    offset: int
    length: int
    """Elements."""
    dtype: np.dtype

    @classmethod
    def of(cls, file: _File, base: int, values: pa.Array) -> Slices:
        """The data buffer of a mapped array of fixed-width values; `base` as `_File.batches` gives it."""
        dtype = np.dtype(values.type.to_pandas_dtype())
        data = values.buffers()[1]
        if data is None or not len(values):
            return cls(file, 0, 0, dtype)
        return cls(file, data.address - base + values.offset * dtype.itemsize, len(values), dtype)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, part: slice) -> np.ndarray:
        start, stop, _ = part.indices(self.length)
        if stop <= start:
            return np.zeros(0, dtype=self.dtype)
        width = self.dtype.itemsize
        return np.frombuffer(self.file.read(self.offset + start * width, (stop - start) * width), dtype=self.dtype)


class _Batches:
    """Which record batch of a file holds a row (rows are read from their batch)."""

    def __init__(self, batches: Sequence[pa.RecordBatch]) -> None:
        self.starts = np.cumsum([0] + [batch.num_rows for batch in batches])
        """Position of each batch's first row, then the row count."""
        self.num_rows = int(self.starts[-1])
        first = batches[0].num_rows if batches else 0
        alike = {batch.num_rows for batch in batches[:-1]} == {first} and batches[-1].num_rows <= first
        self.uniform = first if len(batches) > 1 and alike else 0
        """The rows of every batch but the last (which has no more), where they are all alike (0: not so)."""

    def place(self, position: int) -> tuple[int, int]:
        """(batch, row in it) of a row: by division where every batch but the last has as many
        rows as the first (as the writer makes them)."""
        if self.uniform:
            return divmod(position, self.uniform)
        owner = int(np.searchsorted(self.starts, position, side="right")) - 1
        return owner, position - int(self.starts[owner])


def _list_parts(
    file: _File, base: int, batches: list[pa.RecordBatch], column: str
) -> tuple[list[np.ndarray], list[Slices]]:
    """Per batch, the offsets of a list column (in memory) and its values (read from the file)."""
    return (
        [np.array(batch[column].offsets.to_numpy()) for batch in batches],
        [Slices.of(file, base, batch[column].values) for batch in batches],
    )


class PostingsFile(_Batches):
    """A terms file: its terms and each row's offsets in memory, a row's postings read from the file."""

    def __init__(self, file: _File) -> None:
        self.file = file
        batches, base = file.batches()
        if batches and batches[0].schema != terms_schema():
            raise ValueError(f"{file.path} is not a terms file")
        super().__init__(batches)
        self.terms = [pa.concat_arrays([batch[TermColumn.TERM]]) for batch in batches]
        self.offsets, self.chunks = _list_parts(file, base, batches, TermColumn.CHUNKS)
        self.counts = [Slices.of(file, base, batch[TermColumn.COUNTS].values) for batch in batches]

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
            np.concatenate([np.zeros(0, dtype=np.int32), *chunks]).astype(np.int64),
            np.concatenate([np.zeros(0, dtype=np.int32), *counts]),
        )


class TextsFile(_Batches):
    """A texts file: the offsets in memory, a chunk's text and sentence spans read from the file."""

    def __init__(self, file: _File) -> None:
        self.file = file
        batches, base = file.batches()
        super().__init__(batches)
        self.large = bool(batches) and pa.types.is_large_string(batches[0].schema.field(ChunkColumn.TEXT).type)
        self.text_offsets, self.text_bytes = [], []
        for batch in batches:
            texts = batch[ChunkColumn.TEXT]
            _, offsets, data = texts.buffers()
            wide = np.int64 if self.large else np.int32
            self.text_offsets.append(
                np.frombuffer(offsets, dtype=wide)[texts.offset : texts.offset + len(texts) + 1].copy()
            )
            size = 0 if data is None else data.size
            self.text_bytes.append(Slices(file, 0 if data is None else data.address - base, size, np.dtype(np.uint8)))
        self.start_offsets, self.starts_of = _list_parts(file, base, batches, ChunkColumn.SENTENCE_STARTS)
        self.end_offsets, self.ends_of = _list_parts(file, base, batches, ChunkColumn.SENTENCE_ENDS)

    def text(self, number: int) -> str:
        owner, row = self.place(number)
        offsets = self.text_offsets[owner]
        try:
            return str(self.text_bytes[owner][int(offsets[row]) : int(offsets[row + 1])], "utf-8")
        except UnicodeDecodeError:  # bytes written over, found before its checksum was checked
            raise self.file.refuse() from None

    def sentence_spans(self, number: int) -> tuple[tuple[int, int], ...]:
        owner, row = self.place(number)
        starts = self.starts_of[owner][int(self.start_offsets[owner][row]) : int(self.start_offsets[owner][row + 1])]
        ends = self.ends_of[owner][int(self.end_offsets[owner][row]) : int(self.end_offsets[owner][row + 1])]
        return tuple(zip(starts.tolist(), ends.tolist()))

    def batch(self, at: int) -> pa.RecordBatch:
        """A whole batch of the file, read into memory (a merge copies batch after batch)."""
        offsets = self.text_offsets[at]
        data = self.text_bytes[at][int(offsets[0]) : int(offsets[-1])]
        kind = pa.LargeStringArray if self.large else pa.StringArray
        texts = kind.from_buffers(len(offsets) - 1, pa.py_buffer(offsets - offsets[0]), pa.py_buffer(data))
        spans = [
            pa.ListArray.from_arrays(
                pa.array(offsets_ - offsets_[0], pa.int32()), pa.array(values[int(offsets_[0]) : int(offsets_[-1])])
            )
            for offsets_, values in (
                (self.start_offsets[at], self.starts_of[at]),
                (self.end_offsets[at], self.ends_of[at]),
            )
        ]
        return pa.RecordBatch.from_arrays([texts, *spans], names=list(TEXT_COLUMNS))

    def batches(self) -> Iterator[tuple[pa.RecordBatch, int]]:
        """Each batch, read in turn, with the number of its first row."""
        for at in range(len(self.text_offsets)):
            yield self.batch(at), int(self.starts[at])


class Segment:
    """One segment's files, each opened when first used: the large ones (postings, texts) read
    slice by slice from the file, the others read whole into memory."""

    def __init__(
        self,
        folder: Path,
        sizes: Mapping[str, int] | None = None,
        checksums: Mapping[str, str] | None = None,
        index: str | None = None,
    ) -> None:
        self.folder = folder
        self.index = index
        """The URI of the index it belongs to, named in the advice of a refusal."""
        self.sizes = sizes
        """Each file's size as written, where the manifest records it."""
        self.checksums = checksums
        """Each file's CRC-32 as written, where the manifest records it."""
        self.verified = False
        """Whether `verify` has read the large files through."""

    @property
    def name(self) -> str:
        """The segment's name in the manifest (its folder's, locally and in the cache)."""
        return self.folder.name

    def _file(self, name: str) -> _File:
        return _File(
            self.folder / name,
            None if self.sizes is None else self.sizes.get(name),
            None if self.checksums is None else self.checksums.get(name),
            self.index,
        )

    def _whole(self, name: str) -> pa.Table:
        """A small file, read whole into memory, its checksum checked: nothing of it stays mapped."""
        return pa.ipc.open_file(pa.BufferReader(self._file(name).whole())).read_all()

    def verify(self) -> None:
        """Check the checksums of the files read slice by slice (the others are checked as they are
        read whole): SegmentChanged where one does not match, after which that file is refused.
        Reads both files through, so it is done once per segment, off the path of a search."""
        if self.verified:
            return
        self.postings.file.verify()
        self.texts.file.verify()
        self.verified = True

    @cached_property
    def catalogue(self) -> ChunkCatalogue:
        held = self._whole(CATALOGUE_FILE)
        return ChunkCatalogue(held.drop_columns([NUMBERS_BY_ID]), _array(held[NUMBERS_BY_ID]).to_numpy())

    @property
    def size(self) -> int:
        return len(self.catalogue)

    @cached_property
    def postings(self) -> PostingsFile:
        return PostingsFile(self._file(TERMS_FILE))

    @cached_property
    def texts(self) -> TextsFile:
        return TextsFile(self._file(TEXTS_FILE))

    @cached_property
    def vocabulary(self) -> Vocabulary:
        words, rows = self._whole(VOCABULARY_FILE), self._whole(WORD_ROWS_FILE)
        return Vocabulary(_array(words[WORD]), _array(rows[ROW]).to_numpy(), _array(words[FIRST_ROW]).to_numpy())

    @cached_property
    def title_words(self) -> TitleWords:
        titled = self._whole(TITLE_WORDS_FILE)
        return TitleWords(_array(titled[WORD]), _array(titled[OWNER]).to_numpy())

    def dead(self, name: str | None) -> np.ndarray:
        """The local numbers of the file of removed chunks `name` (None: none removed)."""
        if name is None:
            return np.zeros(0, dtype=np.int64)
        return _array(self._whole(name)[NUMBER]).to_numpy().astype(np.int64)

    def numbers_of_documents(self, doc_keys: Sequence[str]) -> np.ndarray:
        """The local numbers of the chunks of these documents (ids begin with the doc key and "-")."""
        sorted_ids = self.catalogue.sorted_ids
        found = [
            self.catalogue.numbers_by_id[
                np.searchsorted(sorted_ids, f"{key}-") : np.searchsorted(sorted_ids, f"{key}.")
            ]
            for key in doc_keys
        ]
        return np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *found]).astype(np.int64))

    def check(self) -> None:
        """Open every file; OSError or ValueError where one is missing, of another size than written,
        or does not match the others."""
        size = self.size
        if self.texts.num_rows != size:
            raise ValueError(f"{self.folder / TEXTS_FILE} does not match its catalogue")
        if self.vocabulary.rows.shape[0] != self.postings.num_rows:
            raise ValueError(f"{self.folder / WORD_ROWS_FILE} does not match its terms")
        self.title_words


def file_sizes(folder: Path) -> dict[str, int]:
    """The size of each file of a segment written in `folder`, for the manifest (SegmentEntry.sizes)."""
    return {name: (folder / name).stat().st_size for name in FILES}


def file_checksums(folder: Path) -> dict[str, str]:
    """The checksum of each file of a segment written in `folder`, for the manifest (SegmentEntry.checksums)."""
    return {name: file_checksum(folder / name) for name in FILES}


def file_checksum(path: Path) -> str:
    """The CRC-32 of a file's bytes, as eight hex digits: a check against bytes written over, not
    against an adversary (the manifest beside the files could be written over as well)."""
    return f"{_File(path, None).crc():08x}"


def write_dead(path: Path, numbers: np.ndarray) -> None:
    _write(path, {NUMBER: pa.array(np.unique(numbers).astype(np.int32))})


def write_segment(folder: Path, rows: pa.Table) -> int:
    """Write a segment of these chunk rows (SEGMENT_COLUMNS, the words filled in) into `folder`;
    how many chunks it holds."""
    numbers = np.arange(rows.num_rows)
    terms = invert(
        [(numbers, rows[ChunkColumn.TERMS].combine_chunks(), rows[ChunkColumn.TERM_COUNTS].combine_chunks())]
    )
    _write_terms(folder, terms)
    _write_texts(folder, [rows.select(list(TEXT_COLUMNS))])
    counts = pc.fill_null(pc.list_value_length(rows[ChunkColumn.SENTENCE_STARTS]), 0)
    _write_catalogue(folder, rows.select(list(HELD_COLUMNS)).append_column(SENTENCE_COUNT, counts))
    return rows.num_rows


def write_merged(folder: Path, inputs: Sequence[tuple[Segment, np.ndarray]]) -> int:
    """Write into `folder` one segment of the live chunks of `inputs` (each segment with its dead
    local numbers), in the order given; how many chunks it holds. Postings are concatenated term by
    term (the inputs' numbers ascend, so each term's stay ascending): nothing is read again."""
    kept = [_live_mask(segment.size, dead) for segment, dead in inputs]
    renumbered, base = [], 0
    for mask in kept:
        new = np.full(len(mask), -1, dtype=np.int64)
        new[mask] = base + np.arange(int(mask.sum()))
        renumbered.append(new)
        base += int(mask.sum())
    _write_terms(folder, _merged_postings([segment.postings for segment, _ in inputs], renumbered))
    _write_texts(
        folder,
        (
            batch.filter(pa.array(mask[first : first + batch.num_rows]))
            for (segment, _), mask in zip(inputs, kept)
            for batch, first in segment.texts.batches()
        ),
    )
    _write_catalogue(
        folder,
        pa.concat_tables([segment.catalogue.table.filter(pa.array(mask)) for (segment, _), mask in zip(inputs, kept)]),
    )
    return base


def _live_mask(size: int, dead: np.ndarray) -> np.ndarray:
    mask = np.ones(size, dtype=bool)
    mask[dead] = False
    return mask


def _merged_postings(sources: Sequence[PostingsFile], renumbered: Sequence[np.ndarray]) -> Iterator[pa.Table]:
    """The terms rows of several segments as one segment's, renumbered (-1: removed), one row per
    term, about SEGMENT_POSTINGS postings at a time."""
    terms = pa.concat_arrays([pa.array([], pa.string()), *(b for s in sources for b in s.terms)])
    lengths, firsts, owners = [], [], []
    for at, source in enumerate(sources):
        for offsets, chunks in zip(source.offsets, source.chunks):
            lengths.append(np.diff(offsets).astype(np.int64))
            firsts.append(offsets[:-1].astype(np.int64))
            owners.append(np.full(len(offsets) - 1, len(owners), dtype=np.int64))
    batches = [
        (renumbered[at], counts, chunks) for at, s in enumerate(sources) for counts, chunks in zip(s.counts, s.chunks)
    ]
    lengths_of, first_of, batch_of = (np.concatenate([np.zeros(0, np.int64), *x]) for x in (lengths, firsts, owners))
    order = pc.sort_indices(terms).to_numpy()  # stable: a term's rows keep the sources' order
    sorted_terms = terms.take(pa.array(order))
    starts = np.ones(len(order), dtype=bool)
    if len(order):
        starts[1:] = pc.not_equal(sorted_terms[1:], sorted_terms[:-1]).to_numpy(zero_copy_only=False)
    group_starts = np.flatnonzero(starts)
    size = np.cumsum(lengths_of[order])
    first = 0
    while first < len(group_starts):
        done = size[group_starts[first] - 1] if group_starts[first] else 0
        limit = np.searchsorted(size[group_starts], done + SEGMENT_POSTINGS, side="left")
        last = max(int(limit), first + 1)
        row_from = group_starts[first]
        row_to = group_starts[last] if last < len(group_starts) else len(order)
        yield _grouped(
            sorted_terms, order, row_from, row_to, group_starts[first:last], lengths_of, first_of, batch_of, batches
        )
        first = last


def _grouped(
    sorted_terms: pa.Array,
    order: np.ndarray,
    row_from: int,
    row_to: int,
    group_starts: np.ndarray,
    lengths_of: np.ndarray,
    first_of: np.ndarray,
    batch_of: np.ndarray,
    batches: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> pa.Table:
    """One table of merged terms rows: the sorted rows `row_from`..`row_to`, whose terms begin at `group_starts`."""
    chunk_parts, count_parts, row_lengths = [], [], []
    for position in range(row_from, row_to):
        row = order[position]
        renumber, counts, chunks = batches[batch_of[row]]
        first, last = first_of[row], first_of[row] + lengths_of[row]
        new = renumber[chunks[first:last]]
        live = new >= 0
        chunk_parts.append(new[live])
        count_parts.append(counts[first:last][live])
        row_lengths.append(int(live.sum()))
    per_row = np.array(row_lengths, dtype=np.int64)
    bounds = np.append(group_starts - row_from, row_to - row_from)
    per_term = np.add.reduceat(per_row, bounds[:-1]) if len(per_row) else np.zeros(0, dtype=np.int64)
    offsets = pa.array(np.concatenate([[0], np.cumsum(per_term)]), pa.int32())
    chunks = pa.array(np.concatenate([np.zeros(0, np.int64), *chunk_parts]).astype(np.int32))
    counts = pa.array(np.concatenate([np.zeros(0, np.int32), *count_parts]).astype(np.int32))
    table = pa.table(
        [
            sorted_terms.take(pa.array(group_starts)),
            pa.ListArray.from_arrays(offsets, chunks),
            pa.ListArray.from_arrays(offsets, counts),
        ],
        schema=terms_schema(),
    )
    return table.filter(pc.greater(pc.list_value_length(table[TermColumn.CHUNKS]), 0))


def _write_terms(folder: Path, tables: Iterator[pa.Table]) -> None:
    with pa.ipc.new_file(str(folder / TERMS_FILE), terms_schema()) as file:
        for table in tables:
            file.write_table(table)
    terms = _mapped(folder / TERMS_FILE)[TermColumn.TERM]
    vocabulary = Vocabulary.of(terms, np.arange(len(terms)))
    _write(folder / VOCABULARY_FILE, {WORD: vocabulary.words, FIRST_ROW: pa.array(vocabulary.starts)})
    _write(folder / WORD_ROWS_FILE, {ROW: pa.array(vocabulary.rows)})


def _write_texts(folder: Path, parts: Iterator[pa.Table | pa.RecordBatch] | list[pa.Table]) -> None:
    schema = pa.schema(
        [
            pa.field(ChunkColumn.TEXT, pa.string()),
            pa.field(ChunkColumn.SENTENCE_STARTS, pa.list_(pa.int32())),
            pa.field(ChunkColumn.SENTENCE_ENDS, pa.list_(pa.int32())),
        ]
    )
    with pa.ipc.new_file(str(folder / TEXTS_FILE), schema) as file:
        pending: list[pa.Table] = []
        held = 0
        for part in parts:
            table = pa.Table.from_batches([part]) if isinstance(part, pa.RecordBatch) else part
            table = pa.table(
                [
                    pc.fill_null(table[c], pa.scalar([] if c != ChunkColumn.TEXT else "", schema.field(c).type))
                    for c in TEXT_COLUMNS
                ],
                schema=schema,
            )
            pending.append(table)
            held += table.num_rows
            if held >= TEXT_BATCH_ROWS:
                file.write_table(pa.concat_tables(pending).combine_chunks(), max_chunksize=TEXT_BATCH_ROWS)
                pending, held = [], 0
        if pending:
            file.write_table(pa.concat_tables(pending).combine_chunks(), max_chunksize=TEXT_BATCH_ROWS)


def _write_catalogue(folder: Path, held: pa.Table) -> None:
    """The held columns with each chunk's sentence count, and the title words of their titles."""
    catalogue = ChunkCatalogue(held.combine_chunks())
    title_words = TitleWords.of(catalogue.titles)
    _write(folder / TITLE_WORDS_FILE, {WORD: title_words.words, OWNER: pa.array(title_words.owners)})
    _write(
        folder / CATALOGUE_FILE,
        {
            **dict(zip(catalogue.table.column_names, catalogue.table.columns)),
            NUMBERS_BY_ID: pa.array(catalogue.numbers_by_id),
        },
    )


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
