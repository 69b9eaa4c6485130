"""Opening a committed build read-only, at the table versions its manifest names.

Everything outside the indexer reads an index through `open_index` and the `IndexSnapshot` it
returns: chunks, keyword postings, sentence and chunk vector searches and whole documents, each
through an object of its own; column names and manifest fields stay in the index package
(schema.py, manifest.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from . import writer
from .catalogue import HELD_COLUMNS, ChunkCatalogue
from .chunk_reader import ChunkReader
from .chunk_vector_search import ChunkVectorSearch
from .document_assembly import DocumentAssembler
from .keyword_lookup import KeywordLookup
from .manifest import Manifest, check_manifest, normalise_uri
from .mirror import open_mirror
from .reading import read, reading, scan
from .schema import CHUNK_VECTORS, CHUNKS, DOCUMENTS, SENTENCES, TERMS, ChunkColumn, DocumentColumn, SentenceColumn
from .sentence_search import SentenceSearch
from .store import connect
from .vectors import SentenceVectors

C = ChunkColumn
S = SentenceColumn


@dataclass(frozen=True)
class IndexSnapshot:
    """One committed build, opened read-only at the table versions its manifest names."""

    uri: str
    manifest: Manifest
    catalogue: ChunkCatalogue
    chunks: ChunkReader
    keywords: KeywordLookup
    sentences: SentenceSearch
    chunk_vectors: ChunkVectorSearch
    documents: DocumentAssembler

    @property
    def version(self) -> tuple[int, ...]:
        """The committed table versions: two snapshots of one build have the same."""
        return tuple(self.manifest.tables.values())

    @property
    def chunk_count(self) -> int:
        return len(self.catalogue)


def open_index(uri: str, previous: IndexSnapshot | None = None) -> IndexSnapshot:
    """Open the committed build at `uri` read-only; IndexStoreError says what is wrong.

    Exact search reuses the in-memory vectors of `previous` (an earlier build of the same index)
    for the documents this build left unchanged."""
    uri = normalise_uri(uri)
    manifest = check_manifest(uri)
    db = connect(uri)
    tables: dict[str, Any] = {}
    for name in manifest.tables:
        with reading(uri, name):
            tables[name] = db.open_table(name)
            tables[name].checkout(manifest.tables[name])
    mirror = open_mirror(uri, manifest.tables, manifest.counts.chunks)
    if mirror is not None:
        catalogue = mirror.catalogue
    else:
        with reading(uri, CHUNKS):
            columns = [*HELD_COLUMNS, C.SENTENCE_STARTS]
            rows = scan(tables[CHUNKS].search().select(columns).with_row_id(True)).read_all()
        catalogue = ChunkCatalogue.from_rows(rows)
    keywords = KeywordLookup.load(uri, catalogue, tables[TERMS], mirror)
    with reading(uri, SENTENCES):  # every data file is opened: a damaged build is refused here, not mid-search
        scan(tables[SENTENCES].search().select([S.POSITION])).read_all()
    in_memory = None
    if not manifest.vector_index or manifest.counts.sentences < writer.VECTOR_INDEX_MIN_ROWS:
        reused = previous and previous.sentences.in_memory
        in_memory = SentenceVectors(tables[SENTENCES], tables[CHUNKS], catalogue, manifest, reused)
    chunks = ChunkReader(uri, tables[CHUNKS], catalogue, mirror)
    return IndexSnapshot(
        uri,
        manifest,
        catalogue,
        chunks,
        keywords,
        SentenceSearch(uri, tables[SENTENCES], catalogue, manifest, in_memory),
        ChunkVectorSearch(uri, tables[CHUNK_VECTORS], catalogue),
        DocumentAssembler(chunks),
    )


LISTED_COLUMNS = (
    DocumentColumn.ID,
    DocumentColumn.TITLE,
    DocumentColumn.SOURCE,
    DocumentColumn.CHUNKS,
    DocumentColumn.SENTENCES,
    DocumentColumn.INDEXED_AT,
)
"""What `list_documents` tells of a document (not the file it was read from: a machine's path)."""


def list_documents(uri: str) -> list[dict[str, Any]]:
    """The documents of the committed build at `uri`, by source then id: plain dicts of LISTED_COLUMNS.
    Only the documents table is opened. IndexStoreError says what is wrong."""
    uri = normalise_uri(uri)
    manifest = check_manifest(uri)

    def fetch() -> pa.Table:
        table = connect(uri).open_table(DOCUMENTS)
        table.checkout(manifest.tables[DOCUMENTS])
        return scan(table.search().select(list(LISTED_COLUMNS))).read_all()

    rows = read(uri, DOCUMENTS, fetch)
    return rows.sort_by([(DocumentColumn.SOURCE, "ascending"), (DocumentColumn.ID, "ascending")]).to_pylist()
