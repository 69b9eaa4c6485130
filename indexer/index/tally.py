"""What a collection holds, kept in its manifest and brought up to date by each commit: how many
documents, chunks and sentences, and how many documents have each file type and lie in each folder
(collection.summary's phrase is made from these).

A build adjusts the tally by the rows it appends and the documents it removes, so a commit costs
what changed: counting the tables and reading every document's source at each commit grew with
the index.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from .collection import folder_of, summary
from .manifest import Composition, Counts, Manifest
from .schema import ChunkColumn

TALLIED_COLUMNS = (ChunkColumn.PART, ChunkColumn.SOURCE, ChunkColumn.FILE_TYPE)
"""The chunk columns a tally is adjusted by: a document is counted at its first chunk (part 0)."""


@dataclass
class CollectionTally:
    documents: int = 0
    chunks: int = 0
    sentences: int = 0
    file_types: Counter[str] = field(default_factory=Counter)
    folders: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, manifest: Manifest | None) -> CollectionTally:
        """The tally a manifest records (an empty one for a new index)."""
        if manifest is None:
            return cls()
        counts, composition = manifest.counts, manifest.composition
        return cls(
            counts.documents,
            counts.chunks,
            counts.sentences,
            Counter(composition.file_types),
            Counter(composition.folders),
        )

    def change(self, chunk_rows: pa.Table, sentences: int, sign: int = 1) -> None:
        """Count (sign 1) or uncount (sign -1) whole documents' chunk rows (TALLIED_COLUMNS at least)
        and their sentences."""
        first = chunk_rows.filter(pc.equal(chunk_rows[ChunkColumn.PART], 0))
        types = Counter(first[ChunkColumn.FILE_TYPE].to_pylist())
        folders = Counter(folder_of(source or "") for source in first[ChunkColumn.SOURCE].to_pylist())
        self.documents += sign * first.num_rows
        self.chunks += sign * chunk_rows.num_rows
        self.sentences += sign * sentences
        for tallied, change in ((self.file_types, types), (self.folders, folders)):
            tallied.update({key: sign * count for key, count in change.items()})
            for key in [key for key, count in tallied.items() if count <= 0]:
                del tallied[key]

    def counts(self) -> Counts:
        return Counts(self.documents, self.chunks, self.sentences)

    def recorded(self, manifest: Manifest) -> Manifest:
        """`manifest` with this tally: what a commit records of it."""
        return replace(
            manifest,
            summary=summary(self.file_types, self.folders),
            counts=self.counts(),
            composition=Composition(dict(self.file_types), dict(self.folders)),
        )
