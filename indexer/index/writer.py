"""Writing the index format: LanceDB tables and a manifest that commits a build.

Layout of an index at URI (a local folder or an object-store URI such as ``s3://bucket/idx``)::

    URI/manifest.json        what was built, and which table versions make up the index
    URI/files.json           each source file as last read (file_states.py): what a sync need not read
    URI/files-log.json       the files each later commit changed
    URI/chunks.lance         one row per chunk (text, document, neighbours by id, its words)
    URI/sentences.lance      one row per sentence (chunk id, offsets, vector)
    URI/chunk_vectors.lance  one vector per chunk (Naive RAG's embedding search)
    URI/documents.lance      one row per document (id, title, source, file, counts, when indexed)
    URI/keywords/NAME/       keyword segments: the chunks' words, texts and held columns as
                             Arrow files, one segment per commit, merged by size (segments.py)

The manifest is written after the tables and segments and replaced atomically, so a reader that opens the
tables at the versions it names never sees half a build. A build commits in steps: a killed build
keeps the steps it committed. Old table versions are only cleaned up when they are older than the
versions the index named when the build started, so no cleanup removes a version that the
committed manifest, or a server that has followed it, still reads. Columns: schema.py; reading a
build: snapshot.py.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa
from lancedb.index import BTree, IvfPq

from . import vectors
from .compaction import compact, compaction_due
from .completeness import WrittenRows
from .file_states import FileState, RecordedFiles, write_file_states
from .fragments import append, appended_rows
from .ids import chunk_id, doc_key
from .keywords import SEGMENT_COLUMNS, KeywordSegments, chunk_terms
from .manifest import Manifest, write_manifest
from .reading import scan, sql_list, sql_lists
from .schema import (
    CHUNK_VECTORS,
    CHUNKS,
    DOCUMENTS,
    SENTENCES,
    TABLES,
    ChunkColumn,
    ChunkVectorColumn,
    DocumentColumn,
    SentenceColumn,
    chunk_vectors_schema,
    chunks_schema,
    documents_schema,
    sentences_schema,
)
from .store import connect
from .stored_documents import LookedUpDocuments, StoredDocument, scanned_documents
from .stores import normalise_uri, open_store
from .tally import TALLIED_COLUMNS, CollectionTally

log = logging.getLogger(__name__)

NO_CLEANUP = timedelta(days=365_000)
"""An age that cleans up nothing."""
READER_GRACE = timedelta(minutes=2)
"""Versions younger than this are never cleaned up: a reader that read the manifest just before a
few quick commits (a watcher's) still finds the versions it names."""
VECTOR_SEARCH = {"nprobes": 60, "refine_factor": 10}
"""How search uses the vector index up to REFINE_GROWS_FROM sentences; recorded in the manifest with
the index's own parameters."""
REFINE_GROWS_FROM = 2_500_000


def vector_search(sentences: int) -> dict[str, int]:
    """How search uses a vector index of this many sentences: past REFINE_GROWS_FROM, the candidates
    re-ranked by their exact vectors grow with the square root of the size. More probes did not
    help at 10M sentences (recall@10 0.921 at 60, 0.925 at 200); re-ranking 20x did (0.964, p50
    42 ms; bench/README.md, Scale)."""
    grown = round(VECTOR_SEARCH["refine_factor"] * math.sqrt(sentences / REFINE_GROWS_FROM))
    return {**VECTOR_SEARCH, "refine_factor": max(VECTOR_SEARCH["refine_factor"], grown)}


def chunk_vector_table(chunk_ids: list[str], doc_keys: list[str], sums: np.ndarray) -> pa.Table:
    """Rows of the chunk_vectors table: each chunk's summed sentence vectors, normalised."""
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    vectors = (sums / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return pa.table(
        {
            ChunkVectorColumn.CHUNK_ID: pa.array(chunk_ids, pa.string()),
            ChunkVectorColumn.DOC_KEY: pa.array(doc_keys, pa.string()),
            ChunkVectorColumn.VECTOR: pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.reshape(-1)), vectors.shape[1]
            ),
        },
        schema=chunk_vectors_schema(vectors.shape[1]),
    )


def sentence_rows_of(rows: list[dict[str, Any]], vectors: np.ndarray) -> pa.Table:
    """Rows of the sentences table: its columns but the vector, given as dicts, and the vectors in order."""
    schema = sentences_schema(vectors.shape[1])
    table = pa.Table.from_pylist(rows, schema=schema.remove(schema.get_field_index(SentenceColumn.VECTOR)))
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), vectors.shape[1])
    return table.append_column(schema.field(SentenceColumn.VECTOR), column)


def chunk_vectors_of(sentence_rows: pa.Table) -> pa.Table:
    """A chunk's vector is the normalised mean of its sentence vectors (bench/README.md: why not its
    leading text); the rows hold whole chunks, so each chunk's sentences are all here."""
    return chunk_vector_table(*sentence_sums(sentence_rows))


def sentence_sums(sentence_rows: pa.Table | pa.RecordBatch) -> tuple[list[str], list[str], np.ndarray]:
    """(chunk ids, their doc keys, the sum of each chunk's sentence vectors in these rows)."""
    chunk_ids = sentence_rows[SentenceColumn.CHUNK_ID].to_pylist()
    order = list(dict.fromkeys(chunk_ids))
    position = {cid: at for at, cid in enumerate(order)}
    column = sentence_rows[SentenceColumn.VECTOR]
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    vectors = column.flatten().to_numpy().reshape(sentence_rows.num_rows, -1)
    sums = np.zeros((len(order), vectors.shape[1]), dtype=np.float32)
    np.add.at(sums, [position[cid] for cid in chunk_ids], vectors)
    keys = dict(zip(chunk_ids, sentence_rows[SentenceColumn.DOC_KEY].to_pylist()))
    return order, [keys[cid] for cid in order], sums


APPEND_ORDER = (SENTENCES, CHUNK_VECTORS, CHUNKS, DOCUMENTS)
"""A document's rows are appended in this order: its documents row last marks it whole."""


def table_uri(uri: str, name: str) -> str:
    """Where LanceDB keeps table `name` of the index at `uri`."""
    return f"{uri.rstrip('/')}/{name}.lance"


def table_rows(
    chunk_rows: pa.Table, sentence_rows: pa.Table, document_rows: pa.Table | None = None
) -> dict[str, pa.Table]:
    """The rows to append to each table for whole chunks (the chunks' words and vectors filled in);
    a table with nothing to append is left out."""
    document_rows = documents_schema().empty_table() if document_rows is None else document_rows
    rows = {DOCUMENTS: document_rows} if len(document_rows) else {}
    if not len(chunk_rows):
        return rows
    terms, counts = chunk_terms(chunk_rows[ChunkColumn.TEXT])
    chunk_rows = chunk_rows.set_column(chunk_rows.schema.get_field_index(ChunkColumn.TERMS), ChunkColumn.TERMS, terms)
    chunk_rows = chunk_rows.set_column(
        chunk_rows.schema.get_field_index(ChunkColumn.TERM_COUNTS), ChunkColumn.TERM_COUNTS, counts
    )
    return {SENTENCES: sentence_rows, CHUNK_VECTORS: chunk_vectors_of(sentence_rows), CHUNKS: chunk_rows, **rows}


class IndexWriter:
    """Writes one build: starts from the last committed versions, commits by writing the manifest."""

    def __init__(
        self,
        uri: str,
        dimension: int,
        committed: Manifest | None,
        rebuild: bool = False,
        check_contents: bool = False,
        merge_segments: bool = True,
    ) -> None:
        """`committed`: the index's manifest as the command found it, under its lock (None: a new
        index, or one of another format that is rebuilt). `check_contents`: read the committed
        keyword segments through to check their checksums (their sizes are always checked), as a
        command run by hand does and a watcher's batch does not.
        `merge_segments`: merge the keyword segments that are due after each commit (a watcher's
        batches leave them to its idle moments)."""
        self.uri = normalise_uri(uri)
        self.merge_segments = merge_segments
        self.dimension = dimension
        open_store(self.uri).prepare()
        self.committed = committed
        """The index as this build found it."""
        self.kept_from = self.committed
        """The manifest whose table versions, and all later ones, this build keeps: the one it
        found, or on a new index the first one it commits (before that, no server reads any)."""
        self.previous = None if rebuild else self.committed
        self._db = connect(self.uri)
        self.chunks = self._start_table(CHUNKS, chunks_schema())
        self.sentences = self._start_table(SENTENCES, sentences_schema(dimension))
        self.chunk_vectors = self._start_table(CHUNK_VECTORS, chunk_vectors_schema(dimension))
        self.documents = self._start_table(DOCUMENTS, documents_schema())
        self.written = WrittenRows()
        """What `add` wrote since the last commit: `commit` refuses a document written in part."""
        self.tally = CollectionTally.of(self.previous)
        """What the tables hold, as of the rows written so far."""
        self.keyword_segments = KeywordSegments(self.uri, self.previous.segments if self.previous else ())
        """The keyword segments committed, and what changed in them since."""
        if self.previous is not None and (problem := self.keyword_segments.damage(check_contents)):
            log.warning("%s; writing the keyword segments again from the chunks table", problem)
            self.keyword_segments.rewrite(scan(self.chunks.search().select(list(SEGMENT_COLUMNS))))
        self.recorded_files: RecordedFiles | None = None
        """The source files' states the last commit recorded (file_states.py), which the next
        commit records its own as a change of; None: it records them whole."""

    def _start_table(self, name: str, schema: pa.Schema) -> Any:
        """The table as of the last commit; anything a killed build left behind is rolled back."""
        if self.previous is None:
            return self._db.create_table(name, schema=schema, mode="overwrite")
        table = self._db.open_table(name)
        committed = self.previous.tables[name]
        if table.version != committed:
            table.restore(committed)
        return table

    def existing_documents(self, looked_up: Iterable[str] | None = None) -> Mapping[str, StoredDocument]:
        """doc_id → content hash and file of every committed document, and what the rows of each
        document an earlier build wrote in part lack (those with chunks but no documents row too).
        With `looked_up`, those documents are looked up by key, and any other when first asked for
        (stored_documents.py): a watcher's batch reads no more than it needs."""
        if looked_up is None:
            return scanned_documents(self.chunks, self.documents)
        return LookedUpDocuments(self.chunks, self.documents, looked_up)

    def sentence_vectors(self, doc_ids: Sequence[str]) -> dict[int, np.ndarray]:
        """Embedding key → vector of the committed sentences of these documents (rows.queue_document
        reuses them for the sentences of a new version embedded as the same text)."""
        listed = sql_list([doc_key(doc_id) for doc_id in doc_ids])
        query = self.sentences.search().where(
            f"{SentenceColumn.DOC_KEY} IN ({listed}) AND {SentenceColumn.EMBED_KEY} IS NOT NULL"
        )
        rows = scan(query.select([SentenceColumn.EMBED_KEY, SentenceColumn.VECTOR])).read_all()
        if not rows.num_rows:
            return {}
        vectors = rows[SentenceColumn.VECTOR].combine_chunks().flatten().to_numpy().reshape(rows.num_rows, -1)
        return dict(zip(rows[SentenceColumn.EMBED_KEY].to_pylist(), vectors))

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        keys = [doc_key(doc_id) for doc_id in doc_ids]
        tables = (
            (self.chunks, ChunkColumn.DOC_KEY),
            (self.sentences, SentenceColumn.DOC_KEY),
            (self.chunk_vectors, ChunkVectorColumn.DOC_KEY),
            (self.documents, DocumentColumn.DOC_KEY),
        )
        for listed in sql_lists(keys):
            doomed = scan(
                self.chunks.search().where(f"{ChunkColumn.DOC_KEY} IN ({listed})").select(list(TALLIED_COLUMNS))
            )
            sentences = self.sentences.count_rows(f"{SentenceColumn.DOC_KEY} IN ({listed})")
            self.tally.change(doomed.read_all(), sentences, sign=-1)
            for table, column in tables:
                table.delete(f"{column} IN ({listed})")
        self.keyword_segments.remove(keys)

    def move_document(self, old_id: str, doc_id: str, doc_hash: str, title: str, source: str, path: str) -> bool:
        """Give the rows of `old_id` to the document `doc_id` (with its content hash, source and file)
        without embedding again: a renamed file's document whose text and title are unchanged, so that
        its vectors are too. False, with nothing changed, where the title differs."""
        old_key, key = doc_key(old_id), doc_key(doc_id)
        chunk_rows = self.chunks.search().where(f"{ChunkColumn.DOC_KEY} = '{old_key}'").to_arrow()
        document_rows = self.documents.search().where(f"{DocumentColumn.DOC_KEY} = '{old_key}'").to_arrow()
        if not len(chunk_rows) or len(document_rows) != 1 or document_rows[DocumentColumn.TITLE][0].as_py() != title:
            return False
        sentence_rows = self.sentences.search().where(f"{SentenceColumn.DOC_KEY} = '{old_key}'").to_arrow()
        renamed = {chunk_id(old_key, part): chunk_id(key, part) for part in chunk_rows[ChunkColumn.PART].to_pylist()}
        chunk_rows = _set_columns(
            chunk_rows,
            {
                ChunkColumn.ID: [renamed[cid] for cid in chunk_rows[ChunkColumn.ID].to_pylist()],
                ChunkColumn.DOC_KEY: [key] * len(chunk_rows),
                ChunkColumn.DOC_ID: [doc_id] * len(chunk_rows),
                ChunkColumn.DOC_HASH: [doc_hash] * len(chunk_rows),
                ChunkColumn.SOURCE: [source] * len(chunk_rows),
            },
        )
        sentence_rows = _set_columns(
            sentence_rows,
            {
                SentenceColumn.CHUNK_ID: [renamed[cid] for cid in sentence_rows[SentenceColumn.CHUNK_ID].to_pylist()],
                SentenceColumn.DOC_KEY: [key] * len(sentence_rows),
            },
        )
        document_rows = _set_columns(
            document_rows,
            {
                DocumentColumn.ID: [doc_id],
                DocumentColumn.DOC_KEY: [key],
                DocumentColumn.DOC_HASH: [doc_hash],
                DocumentColumn.SOURCE: [source],
                DocumentColumn.PATH: [path],
            },
        )
        self.delete_documents([old_id, doc_id])
        self.add(chunk_rows, sentence_rows, document_rows)
        return True

    def add(self, chunk_rows: pa.Table, sentence_rows: pa.Table, document_rows: pa.Table | None = None) -> None:
        """Append rows (the chunks' words and vectors are filled in here); sentences first, documents last."""
        rows = table_rows(chunk_rows, sentence_rows, document_rows)
        for name in APPEND_ORDER:
            if name in rows:
                getattr(self, name).add(rows[name])
        if CHUNKS in rows:
            self.keyword_segments.append(rows[CHUNKS])
        self.written.record(rows.get(CHUNKS, chunk_rows), rows.get(DOCUMENTS, documents_schema().empty_table()))
        self.tally.change(chunk_rows, len(sentence_rows))

    def append_fragments(
        self, fragments: dict[str, list[str]], chunk_rows: pa.Table, document_rows: pa.Table, sentences: int
    ) -> None:
        """Append fragments written elsewhere (fragments.py) to the tables, in the order `add` writes
        them; `chunk_rows` and `document_rows` are the rows they hold, checked before the next commit
        (the chunk rows with TALLIED_COLUMNS too), `sentences` how many sentence rows they hold."""
        for name in APPEND_ORDER:
            if fragments.get(name):
                table = getattr(self, name)
                dataset = append(table_uri(self.uri, name), fragments[name], table.version)
                table.checkout_latest()
                if name == CHUNKS:
                    for batch in appended_rows(dataset, len(fragments[name]), SEGMENT_COLUMNS):
                        self.keyword_segments.append(pa.Table.from_batches([batch]))
        self.written.record(chunk_rows, document_rows)
        self.tally.change(chunk_rows, sentences)

    def commit_step(self, record: Manifest, files: dict[str, FileState], in_progress: str | None = None) -> Manifest:
        """Commit what is written so far (whole documents, and the chunks of `in_progress` written
        so far): the manifest names the table versions and the keyword segments; the vector index
        is extended at the end."""
        previous_index = self.previous.vector_index if self.previous else None
        return self.commit(replace(record, vector_index=previous_index), files, in_progress)

    def finish_tables(self) -> dict[str, Any] | None:
        """Compact the tables that are due (`_due`), keep the lookup indexes, and the vector index
        once the table is large. Returns the vector index's parameters (recorded in the manifest), or
        None for exact search."""
        for table in (self.chunks, self.sentences, self.chunk_vectors, self.documents):
            if self._due(table):
                compact(table, lambda: self._cleanup_age(table))
        self._keep_index(self.chunks, ChunkColumn.ID)
        self._keep_index(self.chunks, ChunkColumn.DOC_KEY)
        self._keep_index(self.sentences, SentenceColumn.DOC_KEY)
        return self._vector_index()

    def _due(self, table: Any) -> bool:
        """Whether a table is compacted now: in a new build or a rebuild (whose tables were
        overwritten: cleanup removes the old rows), or once enough small fragments have gathered
        (compaction.py)."""
        return self.previous is None or compaction_due(table)

    @staticmethod
    def _keep_index(table: Any, column: str) -> None:
        """A B-tree on `column`, made once: each compaction adds the rows appended since
        (compaction.py), and a search reads the rows not yet in it directly."""
        if not any(index.columns == [column] for index in table.list_indices()):
            table.create_index(column, config=BTree(), replace=True)

    def recount(self) -> None:
        """Count the tally from the tables, where they hold rows that no commit counted: documents an
        earlier build wrote in part (`existing_documents`)."""
        rows = scan(self.chunks.search().select(list(TALLIED_COLUMNS))).read_all()
        self.tally = CollectionTally()
        self.tally.change(rows, self.sentences.count_rows())

    def _cleanup_age(self, table: Any) -> timedelta:
        """Versions older than the one `kept_from` names, and than READER_GRACE, are cleaned up. That
        one and all later ones are kept: a server may still read them, and those of a killed build
        are cleaned up by a later build. Where nothing was ever committed, every version but the newest goes (a first
        build leaves one copy of its rows, not its fragments and their compacted copy). A clock
        behind the kept version's time (another machine's clock, a clock set back) cleans up nothing."""
        if self.kept_from is None:
            return timedelta(0)
        named = self.kept_from.tables.get(table.name)
        stamps = [version["timestamp"] for version in table.list_versions() if version["version"] == named]
        if not stamps:
            return NO_CLEANUP
        age = datetime.now(stamps[0].tzinfo) - stamps[0]
        return max(age + timedelta(seconds=1), READER_GRACE) if age >= timedelta(0) else NO_CLEANUP

    def _vector_index(self) -> dict[str, Any] | None:
        """Train the IVF-PQ index once; each later compaction adds the new rows to it (compaction.py),
        and search follows the index's size (vector_search)."""
        previous = self.previous.vector_index if self.previous else None
        rows = self.sentences.count_rows()
        if previous:
            return {**previous, **vector_search(rows)}
        if rows < vectors.VECTOR_INDEX_MIN_ROWS:
            return None
        params = {
            "type": "IVF_PQ",
            "num_partitions": max(64, int(rows**0.5)),
            "num_sub_vectors": max(1, self.dimension // 8),
            **vector_search(rows),
        }
        config = IvfPq(
            distance_type="dot", num_partitions=params["num_partitions"], num_sub_vectors=params["num_sub_vectors"]
        )
        self.sentences.create_index(SentenceColumn.VECTOR, config=config, replace=True)
        return params

    def commit(self, record: Manifest, files: dict[str, FileState], in_progress: str | None = None) -> Manifest:
        """Name the tables' current versions in the manifest, atomically: readers see the build from here on.
        `record` is what the build records beside them (how it embeds, its sources, its description);
        the tally, the tables and the keyword segments are this writer's.
        `files` are the source files' states the committed documents were read from (file_states.py).
        Refused (IncompleteWrite) if a document written since the last commit lacks a chunk or its
        row, but `in_progress`, a document committed in parts (the next build completes it)."""
        self.written.check(in_progress)
        manifest = replace(
            self.tally.recorded(record),
            tables={name: getattr(self, name).version for name in TABLES},
            segments=tuple(self.keyword_segments.commit()),
        )
        self.recorded_files = write_file_states(self.uri, manifest.tables, files, since=self.recorded_files)
        write_manifest(manifest)
        self.kept_from = self.kept_from or manifest
        if self.merge_segments:
            return self.keyword_segments.merge_due(manifest)
        self.keyword_segments.remove_unused()
        return manifest


def _set_columns(rows: pa.Table, values: dict[str, list[Any]]) -> pa.Table:
    """`rows` with these columns' values replaced."""
    for name, column in values.items():
        at = rows.schema.get_field_index(name)
        rows = rows.set_column(at, rows.schema.field(at), pa.array(column, rows.schema.field(at).type))
    return rows
