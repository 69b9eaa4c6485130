"""The committed documents a command compares what it reads with: each one's content hash, the file
it was read from, and what its rows lack where an earlier build wrote it in part (completeness.py).

A build or a full sync reads them all at once (`scanned_documents`). A watcher's batch reads a few
files, so it looks up the documents those files held, and any other id it meets, by their keys
(`LookedUpDocuments`): its cost follows the batch, not the index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from .completeness import incomplete_documents
from .ids import doc_key
from .reading import scan, sql_lists
from .schema import ChunkColumn, DocumentColumn

SCAN_AFTER_MISSES = 256
"""Ids looked up one at a time before every document is read at once: a new file of many records
in a watcher's batch would otherwise make a query per record."""


@dataclass(frozen=True)
class StoredDocument:
    doc_hash: str
    path: str
    """The resolved path of the file it was read from ("" where its documents row is missing or
    names none: rows written by other tools than arag-index)."""
    problem: str = ""
    """What its rows lack (completeness.py): an earlier build wrote it in part. "" for a whole document."""


def documents_of(chunk_rows: pa.Table, document_rows: pa.Table) -> dict[str, StoredDocument]:
    """doc_id → its stored state, from its documents row (id, hash, path, chunks) and its chunk rows
    (id, doc id, part, parts): every document either names, those with chunks but no documents row too."""
    columns = (
        document_rows[name].to_pylist() for name in (DocumentColumn.ID, DocumentColumn.DOC_HASH, DocumentColumn.PATH)
    )
    stored = {doc_id: StoredDocument(doc_hash, path or "") for doc_id, doc_hash, path in zip(*columns)}
    for doc_id, problem in incomplete_documents(chunk_rows, document_rows).items():
        stored[doc_id] = replace(stored.get(doc_id, StoredDocument("", "")), problem=problem)
    return stored


DOCUMENT_COLUMNS = [DocumentColumn.ID, DocumentColumn.DOC_HASH, DocumentColumn.PATH, DocumentColumn.CHUNKS]
CHUNK_COLUMNS = [ChunkColumn.ID, ChunkColumn.DOC_ID, ChunkColumn.PART, ChunkColumn.PARTS]


def scanned_documents(chunks: Any, documents: Any) -> dict[str, StoredDocument]:
    """Every committed document, from a scan of the chunks and documents tables."""
    return documents_of(
        scan(chunks.search().select(CHUNK_COLUMNS)).read_all(),
        scan(documents.search().select(DOCUMENT_COLUMNS)).read_all(),
    )


class LookedUpDocuments(Mapping[str, StoredDocument]):
    """The committed documents with the ids asked for, looked up by key through the tables' doc-key
    indexes: `prefetched` at once, any other id when first asked for. Iterating gives the documents
    found so far (those of the files a batch reads, which is what it removes or replaces)."""

    def __init__(self, chunks: Any, documents: Any, prefetched: Iterable[str]) -> None:
        self._chunks, self._documents = chunks, documents
        self._found: dict[str, StoredDocument] = {}
        self._asked: set[str] = set()
        self._misses = 0
        self._complete = False
        """Whether every document has been read (after SCAN_AFTER_MISSES ids looked up alone)."""
        self._look_up(list(dict.fromkeys(prefetched)))

    def _look_up(self, doc_ids: Sequence[str]) -> None:
        for listed in sql_lists([doc_key(doc_id) for doc_id in doc_ids]):
            chunk_rows = scan(self._chunks.search().where(f"{ChunkColumn.DOC_KEY} IN ({listed})").select(CHUNK_COLUMNS))
            document_rows = scan(
                self._documents.search().where(f"{DocumentColumn.DOC_KEY} IN ({listed})").select(DOCUMENT_COLUMNS)
            )
            self._found.update(documents_of(chunk_rows.read_all(), document_rows.read_all()))
        self._asked.update(doc_ids)

    def __getitem__(self, doc_id: str) -> StoredDocument:
        if not isinstance(doc_id, str):
            raise KeyError(doc_id)
        if not self._complete and doc_id not in self._asked:
            self._misses += 1
            if self._misses > SCAN_AFTER_MISSES:
                self._found = scanned_documents(self._chunks, self._documents)
                self._complete = True
            else:
                self._look_up([doc_id])
        return self._found[doc_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)
