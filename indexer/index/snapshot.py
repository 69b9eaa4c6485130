"""Opening a committed build read-only, at the table versions its manifest names.

Everything outside the indexer reads an index through `open_index` and the `IndexSnapshot` it
returns: chunks, keyword postings, sentence and chunk vector searches and whole documents, each
through an object of its own; column names and manifest fields stay in the index package
(schema.py, manifest.py).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pyarrow as pa

from . import vectors
from .catalogue import ChunkCatalogue
from .chunk_reader import ChunkReader
from .chunk_vector_search import ChunkVectorSearch
from .document_assembly import DocumentAssembler
from .errors import IndexStoreError, StoreUnanswered
from .keywords import KeywordLookup, SegmentGone, open_segments
from .manifest import Manifest, check_manifest
from .reading import read, reading, scan
from .schema import CHUNK_VECTORS, CHUNKS, DOCUMENTS, SENTENCES, ChunkColumn, DocumentColumn, SentenceColumn
from .sentence_search import SentenceSearch
from .store import connect
from .stores import normalise_uri
from .vectors import SentenceVectors

T = TypeVar("T")
OPEN_ATTEMPTS = 3
"""Times an open reads the manifest anew when a segment it names is gone (replaced by a writer)."""


class Tables:
    """The build's LanceDB tables, opened at the versions its manifest names when first asked for:
    keyword searches and chunk reads are answered from the keyword segments without LanceDB, and
    LanceDB's import is a large part of a server's start (bench/README.md).

    Opening asks the store, which may keep a caller waiting up to its deadline; no lock is held
    meanwhile, so the calls that wait are the ones store_reads.py counts and bounds, not a queue
    behind a lock (two first callers may both open: the first to finish is kept)."""

    def __init__(self, uri: str, manifest: Manifest) -> None:
        self.uri, self.manifest = uri, manifest
        self._opened: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> Any:
        if self._opened is None:
            opened = read(self.uri, name, self._open_all)
            with self._lock:
                if self._opened is None:
                    self._opened = opened
        return self._opened[name]

    def _open_all(self) -> dict[str, Any]:
        """Every table at its committed version; on an object store, run within the store deadline
        (`read`): opening one asks the store, which may not answer."""
        db = connect(self.uri)
        opened = {}
        for table in self.manifest.tables:
            with reading(self.uri, table):
                opened[table] = db.open_table(table)
                opened[table].checkout(self.manifest.tables[table])
        return opened

    def opener(self, name: str) -> Callable[[], Any]:
        return lambda: self[name]


class IndexSnapshot:
    """One committed build, opened read-only at the table versions its manifest names: its
    catalogue, chunks and keyword lookup at once; its sentence and chunk vector searches when
    first used (`check` opens everything, as `arag-index info` does)."""

    def __init__(
        self,
        uri: str,
        manifest: Manifest,
        catalogue: ChunkCatalogue,
        chunks: ChunkReader,
        keywords: KeywordLookup,
        tables: Tables,
        earlier_vectors: SentenceVectors | None = None,
    ) -> None:
        """`earlier_vectors`: the in-memory vectors of the build served before this one, which exact
        search reuses for the documents this build left unchanged."""
        self.uri, self.manifest, self.catalogue, self.chunks, self.keywords = uri, manifest, catalogue, chunks, keywords
        self.documents = DocumentAssembler(chunks)
        self.tables = tables
        self._earlier_vectors = earlier_vectors
        self._sentences: SentenceSearch | None = None
        self._chunk_vectors: ChunkVectorSearch | None = None
        self._lock = threading.Lock()

    @property
    def version(self) -> tuple[int, ...]:
        """The committed table versions: two snapshots of one build have the same."""
        return tuple(self.manifest.tables.values())

    @property
    def chunk_count(self) -> int:
        return len(self.catalogue)

    @property
    def sentences(self) -> SentenceSearch:
        """Opened when first used; every data file of the sentences table is opened then, so a
        damaged build is refused at its first semantic search, not part way through one. Opened
        without the lock held, as the tables are (`Tables`)."""
        if self._sentences is None:
            opened = self._open_sentences()
            with self._lock:
                if self._sentences is None:
                    self._sentences = opened
        return self._sentences

    def _open_sentences(self) -> SentenceSearch:
        uri, manifest = self.uri, self.manifest
        table = self.tables[SENTENCES]
        read(uri, SENTENCES, lambda: scan(table.search().select([SentenceColumn.POSITION])).read_all())
        in_memory = None
        if not manifest.vector_index or manifest.counts.sentences < vectors.VECTOR_INDEX_MIN_ROWS:
            sentences, chunks = self.tables[SENTENCES], self.tables[CHUNKS]
            in_memory = SentenceVectors(sentences, chunks, self.catalogue, manifest, self._earlier_vectors)
        self._earlier_vectors = None
        return SentenceSearch(uri, self.tables[SENTENCES], self.catalogue, manifest, in_memory)

    @property
    def chunk_vectors(self) -> ChunkVectorSearch:
        if self._chunk_vectors is None:
            opened = ChunkVectorSearch(self.uri, self.tables[CHUNK_VECTORS], self.catalogue)
            with self._lock:
                if self._chunk_vectors is None:
                    self._chunk_vectors = opened
        return self._chunk_vectors

    def replaced(self, *, manifest: Manifest | None = None, sentences: SentenceSearch | None = None) -> IndexSnapshot:
        """This build with its manifest as described anew, or with another sentence search."""
        other = copy.copy(self)
        other._lock = threading.Lock()
        other.manifest = manifest or self.manifest
        other._sentences = sentences or self._sentences
        return other

    def loaded_vectors(self) -> SentenceVectors | None:
        """The in-memory vectors of exact search, where its sentences have been opened."""
        return self._sentences.in_memory if self._sentences is not None else None

    def verify_segments(self) -> None:
        """Check the checksums of the keyword segments' large files (each segment once per process):
        IndexStoreError where one does not match, which is refused from then on."""
        self.chunks.segments.verify()

    def check(self) -> None:
        """Open every table, read every data file of the chunks and sentences tables, and check the
        keyword segments' checksums: IndexStoreError where one is damaged."""
        self.verify_segments()
        for name in self.manifest.tables:
            self.tables[name]
        chunks = self.tables[CHUNKS]
        read(self.uri, CHUNKS, lambda: scan(chunks.search().select([ChunkColumn.PART])).read_all())
        self.sentences


def open_index(uri: str, previous: IndexSnapshot | None = None) -> IndexSnapshot:
    """Open the committed build at `uri` read-only; IndexStoreError says what is wrong. Its keyword
    segments are opened (segment_set.py); a segment replaced by a writer between reading the
    manifest and opening it sends the open back to the manifest.

    With `previous` (an earlier build of the same index), what this build left unchanged is taken
    over: the segments both name, opened, with the words derived from them, and exact search's
    in-memory vectors of the documents it kept."""
    uri = normalise_uri(uri)
    for attempt in range(OPEN_ATTEMPTS):
        manifest = check_manifest(uri)
        try:
            segments = open_segments(manifest, previous.chunks.segments if previous is not None else None)
            break
        except SegmentGone:
            if attempt + 1 == OPEN_ATTEMPTS or check_manifest(uri).segments == manifest.segments:
                raise
    tables = Tables(uri, manifest)
    keywords = KeywordLookup.load(segments, previous.keywords if previous is not None else None)
    chunks = ChunkReader(segments, tables.opener(CHUNKS), uri)
    earlier = previous.loaded_vectors() if previous is not None else None
    return IndexSnapshot(uri, manifest, segments.catalogue, chunks, keywords, tables, earlier)


LISTED_COLUMNS = (
    DocumentColumn.ID,
    DocumentColumn.TITLE,
    DocumentColumn.SOURCE,
    DocumentColumn.CHUNKS,
    DocumentColumn.SENTENCES,
    DocumentColumn.INDEXED_AT,
)
"""What `list_documents` tells of a document (not the file it was read from: a machine's path)."""


def list_documents(uri: str, manifest: Manifest | None = None) -> list[dict[str, Any]]:
    """The documents of the build at `uri` that `manifest` describes (the committed one where not
    given, read again if a writer cleaned up its version meanwhile), by source then id: plain dicts
    of LISTED_COLUMNS. Only the documents table is opened, within the store deadline.
    IndexStoreError says what is wrong."""
    uri = normalise_uri(uri)
    if manifest is not None:
        return _documents_of(uri, manifest)
    return _on_a_committed_build(uri, lambda committed: _documents_of(uri, committed))


def _documents_of(uri: str, manifest: Manifest) -> list[dict[str, Any]]:
    def fetch() -> pa.Table:
        table = connect(uri).open_table(DOCUMENTS)
        table.checkout(manifest.tables[DOCUMENTS])
        return scan(table.search().select(list(LISTED_COLUMNS))).read_all()

    rows = read(uri, DOCUMENTS, fetch)
    return rows.sort_by([(DocumentColumn.SOURCE, "ascending"), (DocumentColumn.ID, "ascending")]).to_pylist()


def checked_index(uri: str) -> IndexSnapshot:
    """The committed build, opened with every data file read (`IndexSnapshot.check`), opened again
    if a writer cleaned up a version it names meanwhile: what `arag-index info` reports on."""

    def opened(_: Manifest) -> IndexSnapshot:
        snapshot = open_index(uri)
        snapshot.check()
        return snapshot

    return _on_a_committed_build(normalise_uri(uri), opened)


def _on_a_committed_build(uri: str, work: Callable[[Manifest], T]) -> T:
    """`work(manifest)` on the committed manifest; where what it reads was found gone or damaged
    and a writer has committed since, again on the new manifest: a slower reader than the cleanup's
    grace finds a version, or a data file only it used, removed. What it reads is damage only where
    nothing was committed since."""
    attempts = 0
    while True:
        manifest = check_manifest(uri)
        try:
            return work(manifest)
        except StoreUnanswered:
            raise
        except IndexStoreError:
            attempts += 1
            committed = check_manifest(uri)
            if attempts == OPEN_ATTEMPTS or (committed.tables, committed.segments) == (
                manifest.tables,
                manifest.segments,
            ):
                raise
