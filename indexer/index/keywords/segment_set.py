"""A build's keyword segments as one index: the live chunks of every segment, numbered densely in
segment order (chunk numbers), with each one's catalogue row and text.

Segments number their chunks locally and never change (segments.py); a build's manifest names them
with the files of their removed chunks. Opening maps each segment and derives, per segment, the
chunk number of each live local number: postings read from a segment are renumbered as they are
read, and those of removed chunks dropped. Only the segments' held columns are copied (those of a
segment with removed chunks, filtered); texts and postings are read from their files.

A build that follows another opens only what changed: the segments both name are taken over opened
and checked (with what was derived from them, lookup.py), and a removed-chunk file both name
is not read again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ..catalogue import HELD_COLUMNS, SENTENCE_COUNT, ChunkCatalogue
from ..errors import IndexStoreError
from ..manifest import Manifest, SegmentEntry
from ..schema import chunks_schema
from .segment_store import segment_store
from .segments import FILES, Segment, SegmentChanged

NO_CHUNKS = np.zeros(0, dtype=np.int64)


class SegmentGone(IndexStoreError):
    """A segment the manifest names could not be read: a writer may have replaced it since the
    manifest was read (open again), or it is damaged."""


class SegmentSet:
    """The segments of one build, with their live chunks numbered densely."""

    def __init__(
        self, segments: Sequence[Segment], dead: Sequence[np.ndarray], dead_files: Sequence[str | None]
    ) -> None:
        self.segments = list(segments)
        self.dead = list(dead)
        """Per segment, its removed local numbers."""
        self.dead_files = list(dead_files)
        """Per segment, the file `dead` was read from (None: none removed)."""
        self.numbers_of_local: list[np.ndarray] = []
        """Per segment, the chunk number of each local number (-1: removed)."""
        self.live_locals: list[np.ndarray] = []
        """Per segment, its live local numbers, ascending."""
        first = 0
        for segment, removed in zip(self.segments, dead):
            numbers = np.full(segment.size, -1, dtype=np.int64)
            live = np.ones(segment.size, dtype=bool)
            live[removed] = False
            locals_ = np.flatnonzero(live)
            numbers[locals_] = first + np.arange(len(locals_))
            self.numbers_of_local.append(numbers)
            self.live_locals.append(locals_)
            first += len(locals_)
        self.starts = np.cumsum([0] + [len(locals_) for locals_ in self.live_locals])
        """The chunk number of each segment's first live chunk, then the chunk count."""
        self.catalogue = ChunkCatalogue(self._held(), self._numbers_by_id)

    def __len__(self) -> int:
        return int(self.starts[-1])

    def _held(self) -> pa.Table:
        parts = []
        for segment, locals_ in zip(self.segments, self.live_locals):
            table = segment.catalogue.table
            parts.append(table if len(locals_) == table.num_rows else table.take(pa.array(locals_)))
        if not parts:
            schema = chunks_schema()
            fields = [schema.field(c) for c in HELD_COLUMNS] + [pa.field(SENTENCE_COUNT, pa.int32())]
            return pa.schema(fields).empty_table()
        return pa.concat_tables(parts)

    def _numbers_by_id(self) -> np.ndarray:
        """The chunk numbers in sorted id order: each segment's live ones in its own id order, then
        the runs merged (a stable sort of runs merges them)."""
        runs = []
        for segment, numbers in zip(self.segments, self.numbers_of_local):
            in_order = numbers[segment.catalogue.numbers_by_id]
            runs.append(in_order[in_order >= 0])
        order = np.concatenate([NO_CHUNKS, *runs])
        if len(runs) <= 1:
            return order
        return order[np.argsort(self.catalogue.ids()[order], kind="stable")]

    def place(self, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(segment, local number) of each chunk number."""
        owners = np.searchsorted(self.starts, numbers, side="right") - 1
        locals_ = np.array(
            [
                self.live_locals[owner][number - self.starts[owner]]
                for owner, number in zip(owners.tolist(), numbers.tolist())
            ],
            dtype=np.int64,
        )
        return owners, locals_

    def text(self, number: int) -> str:
        owners, locals_ = self.place(np.array([number]))
        return self.segments[int(owners[0])].texts.text(int(locals_[0]))

    def sentence_spans(self, number: int) -> tuple[tuple[int, int], ...]:
        owners, locals_ = self.place(np.array([number]))
        return self.segments[int(owners[0])].texts.sentence_spans(int(locals_[0]))

    def verify(self) -> None:
        """Check every segment's large files against their checksums (Segment.verify), each segment
        once: SegmentChanged names the first that does not match; the others are still checked."""
        problems = []
        for segment in self.segments:
            try:
                segment.verify()
            except SegmentChanged as exc:
                problems.append(exc)
        if problems:
            raise problems[0]

    def texts(self, numbers: np.ndarray) -> pa.Array:
        """The texts of these chunk numbers, in the order given, as one Arrow array."""
        if not len(numbers):
            return pa.array([], pa.string())
        owners, locals_ = self.place(numbers)
        texts = [self.segments[owner].texts.text(local) for owner, local in zip(owners.tolist(), locals_.tolist())]
        return pa.array(texts, pa.string())


def open_segments(manifest: Manifest, previous: SegmentSet | None = None) -> SegmentSet:
    """The segments `manifest` names, opened (fetched first into the user's cache where the index is
    remote); those `previous` (an earlier build of the same index) holds are taken over, with their
    removed chunks where the file is the same. SegmentGone where one is missing or damaged."""
    store = segment_store(manifest.uri)
    known = {} if previous is None else {segment.name: at for at, segment in enumerate(previous.segments)}
    segments, dead = [], []
    for entry in manifest.segments:
        try:
            at = known.get(entry.name)
            if at is None:
                segment = Segment(store.folder(entry.name, _files(entry)), entry.sizes, entry.checksums, manifest.uri)
                segment.check()
                removed = segment.dead(entry.dead)
            elif previous.dead_files[at] == entry.dead:
                segment, removed = previous.segments[at], previous.dead[at]
            else:
                segment = previous.segments[at]
                store.folder(entry.name, _files(entry))  # an object store's new file of removed chunks, fetched
                removed = segment.dead(entry.dead)
            if segment.size != entry.chunks or len(removed) != entry.dead_count:
                raise ValueError("it does not match the manifest")
        except (OSError, ValueError, IndexError, KeyError, pa.ArrowException) as exc:
            raise SegmentGone(
                f"{manifest.uri}: keyword segment {entry.name} cannot be read ({exc}); "
                f"`arag-index sync --index {manifest.uri}` writes the keyword segments again from the index's tables"
            ) from None
        segments.append(segment)
        dead.append(removed)
    return SegmentSet(segments, dead, [entry.dead for entry in manifest.segments])


def _files(entry: SegmentEntry) -> tuple[str, ...]:
    return (*FILES, entry.dead) if entry.dead else FILES
