"""The writer's side of the keyword segments (segments.py): a commit adds a segment of the chunks
written since the last (one per WRITTEN_CHUNKS of them), and a file of removed chunks for each
segment that lost some; then merges.

Merging is size-tiered: a segment's tier is how many times MERGE_FACTOR its live chunks exceed
SMALLEST_TIER, and MERGE_FACTOR segments of one tier are merged into one of the next. A chunk is
so rewritten about log4(chunks / SMALLEST_TIER) times over its life, and an index holds a few
segments per tier. A segment with more removed chunks than live ones is merged with its tier's
others, or alone. Each merge is committed by a manifest of its own after the commit that made it
due (`merge_due`): the commit's changes are searchable first, and a merge cut short leaves that
manifest whole (its folder, never named, is removed by the next commit). A watcher leaves merges
to its idle moments, so that no save waits for one (watch.py).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..ids import DOC_KEY_CHARS
from ..manifest import Manifest, SegmentEntry, write_manifest
from ..schema import ChunkColumn
from .segment_store import DEAD_PREFIX, segment_name, segment_store
from .segments import (
    FILES,
    SEGMENT_COLUMNS,
    Segment,
    file_checksums,
    file_sizes,
    write_dead,
    write_merged,
    write_segment,
)

MERGE_FACTOR = 4
SMALLEST_TIER = 256
"""Live chunks below which segments are all of the first tier."""
WRITTEN_CHUNKS = 65_536
"""Chunks a segment holds at most as written (by a commit, or again from the chunks table), so
inverting them takes bounded memory however much one commit holds; merges make larger ones."""


def tier(live: int) -> int:
    return int(math.log(max(live, SMALLEST_TIER) / SMALLEST_TIER, MERGE_FACTOR))


class KeywordSegments:
    """The segments a build has committed, the chunks written since, and the chunks removed since."""

    def __init__(self, uri: str, committed: Sequence[SegmentEntry]) -> None:
        self.uri = uri
        self.store = segment_store(uri)
        self.entries = list(committed)
        self._opened: dict[str, Segment] = {}
        self.pending: list[pa.Table] = []
        """Chunk rows written since the last commit (SEGMENT_COLUMNS), fewer than WRITTEN_CHUNKS."""
        self.flushed: list[SegmentEntry] = []
        """Segments of the chunks written since the last commit, published as each WRITTEN_CHUNKS
        of them came, so that a commit of a million chunks holds one segment's rows at a time; the
        next commit names them (a build that stops first leaves them unnamed, and they are removed)."""
        self.removed: dict[str, np.ndarray] = {}
        """Segment name → every removed local number, for the segments that lost chunks since the last commit."""

    def segment(self, entry: SegmentEntry) -> Segment:
        if entry.name not in self._opened:
            self._opened[entry.name] = Segment(
                self.store.folder(entry.name, FILES), entry.sizes, entry.checksums, self.uri
            )
        return self._opened[entry.name]

    def _dead(self, entry: SegmentEntry) -> np.ndarray:
        if entry.name in self.removed:
            return self.removed[entry.name]
        if entry.dead is None:
            return np.zeros(0, dtype=np.int64)
        return Segment(self.store.folder(entry.name, [entry.dead])).dead(entry.dead)

    def damage(self, contents: bool = False) -> str | None:
        """What is wrong with the first committed segment whose files are missing or of another
        size than written, or with `contents`, of another checksum (segment_store.SegmentStore.damage);
        None where none is."""
        for entry in self.entries:
            problem = self.store.damage(entry.name, entry.sizes or {}, (entry.checksums or {}) if contents else {})
            if problem:
                return f"keyword segment {entry.name} is damaged ({problem})"
        return None

    def rewrite(self, chunk_rows: Iterable[pa.RecordBatch]) -> None:
        """Write the segments again from every chunk's rows (SEGMENT_COLUMNS): the next commit names
        them in the place of the committed ones."""
        self.entries, _ = self._written(pa.Table.from_batches([batch]) for batch in chunk_rows)
        self.removed = {}

    def _written(
        self, tables: Iterable[pa.Table], keep_rest: bool = False
    ) -> tuple[list[SegmentEntry], list[pa.Table]]:
        """These chunk rows published as segments of WRITTEN_CHUNKS chunks at most, in order; with
        `keep_rest`, the rows short of a whole segment are kept back and returned instead."""
        entries: list[SegmentEntry] = []
        held: list[pa.Table] = []
        count = 0
        for table in [*tables, None]:
            if table is not None:
                held.append(table.select(list(SEGMENT_COLUMNS)))
                count += table.num_rows
            while count >= WRITTEN_CHUNKS or (table is None and count and not keep_rest):
                rows = pa.concat_tables(held)
                part, rest = rows.slice(0, WRITTEN_CHUNKS), rows.slice(WRITTEN_CHUNKS)
                entries.append(self._published(lambda work, part=part: write_segment(work, part)))
                held, count = ([rest] if rest.num_rows else []), rest.num_rows
        return entries, held

    def append(self, rows: pa.Table) -> None:
        """Chunk rows written to the chunks table (their words filled in); each WRITTEN_CHUNKS of
        them are published as a segment at once."""
        if rows.num_rows:
            self.pending.append(rows.select(list(SEGMENT_COLUMNS)))
        if sum(table.num_rows for table in self.pending) >= WRITTEN_CHUNKS:
            whole, self.pending = self._written(self.pending, keep_rest=True)
            self.flushed.extend(whole)

    def remove(self, doc_keys: Sequence[str]) -> None:
        """The chunks of these documents are gone: from the rows written since, and from the segments."""
        if not doc_keys:
            return
        keys = pa.array(sorted(set(doc_keys)), pa.string())
        self.pending = [
            rows.filter(pc.invert(pc.is_in(pc.utf8_slice_codeunits(rows[ChunkColumn.ID], 0, DOC_KEY_CHARS), keys)))
            for rows in self.pending
        ]
        for entry in [*self.entries, *self.flushed]:
            found = self.segment(entry).numbers_of_documents(keys.to_pylist())
            if len(found):
                dead = self._dead(entry)
                if len(np.setdiff1d(found, dead)):
                    self.removed[entry.name] = np.union1d(dead, found)

    def commit(self) -> list[SegmentEntry]:
        """Write what changed since the last commit; the segments the manifest is to name."""
        written, self.pending = self.pending, []
        flushed, self.flushed = self.flushed, []
        entries = []
        for entry in [*self.entries, *flushed]:
            if entry.name in self.removed:
                dead = self.removed[entry.name]
                if len(dead) == entry.chunks:
                    continue
                name = f"{DEAD_PREFIX}{uuid.uuid4().hex[:16]}.arrow"
                with self.store.new_folder() as work:
                    write_dead(work / name, dead)
                    self.store.add_file(entry.name, work / name)
                entry = entry.with_dead(name, len(dead))
            entries.append(entry)
        self.removed = {}
        entries.extend(self._written(written)[0])
        self.entries = entries
        return list(entries)

    def due(self) -> list[SegmentEntry]:
        """The segments to merge next (none: nothing is due): MERGE_FACTOR of the lowest tier that
        has as many, else a tier's segments where one has more removed chunks than live ones."""
        tiers: dict[int, list[SegmentEntry]] = {}
        for entry in self.entries:
            tiers.setdefault(tier(entry.live), []).append(entry)
        for level in sorted(tiers):
            if len(tiers[level]) >= MERGE_FACTOR:
                return sorted(tiers[level], key=lambda entry: entry.live)[:MERGE_FACTOR]
        for level in sorted(tiers):
            if any(entry.dead_count > entry.live for entry in tiers[level]):
                return tiers[level]
        return []

    def merge(self, inputs: Sequence[SegmentEntry]) -> list[SegmentEntry]:
        """Merge these segments into one, in the place of the first; the segments the manifest is to name."""
        written = self._published(
            lambda work: write_merged(work, [(self.segment(entry), self._dead(entry)) for entry in inputs])
        )
        merged = {entry.name for entry in inputs}
        entries: list[SegmentEntry] = []
        for entry in self.entries:
            if entry.name not in merged:
                entries.append(entry)
            elif written.chunks and not any(e.name == written.name for e in entries):
                entries.append(written)
        self.entries = entries
        return list(entries)

    def merge_due(self, manifest: Manifest) -> Manifest:
        """Merge what is due, writing a manifest (`manifest` with the segments it names) after each
        merge, then remove the segments no manifest names; the manifest last written."""
        written = manifest
        while inputs := self.due():
            written = replace(written, segments=tuple(self.merge(inputs)))
            write_manifest(written)
        self.remove_unused()
        return written

    def _published(self, write: Callable[[Path], int]) -> SegmentEntry:
        """A new segment, written by `write` (into a folder; it returns the chunks written) and
        published, with each file's size and checksum as the manifest records them."""
        name = segment_name()
        with self.store.new_folder() as work:
            chunks = write(work)
            sizes, checksums = file_sizes(work), file_checksums(work)
            self.store.publish(work, name)
        return SegmentEntry(name, chunks, sizes=sizes, checksums=checksums)

    def remove_unused(self) -> None:
        """Remove the segments and removed-chunk files the last manifest does not name."""
        self.store.remove_others({entry.name: entry.dead for entry in self.entries})
        self._opened = {
            name: segment for name, segment in self._opened.items() if any(e.name == name for e in self.entries)
        }


def segments_damage(manifest: Manifest, contents: bool = False) -> str | None:
    """What is wrong with the keyword segments a manifest names (KeywordSegments.damage): a
    command that finds nothing else to do writes them again where something is."""
    return KeywordSegments(manifest.uri, manifest.segments).damage(contents)
