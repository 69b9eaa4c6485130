"""Writing the index format: three LanceDB tables and a manifest that commits a build.

Layout of an index at URI (a local folder or an object-store URI such as ``s3://bucket/idx``)::

    URI/manifest.json        what was built, and which table versions make up the index
    URI/chunks.lance         one row per chunk (text, document, neighbours by id, its words)
    URI/sentences.lance      one row per sentence (chunk id, offsets, vector)
    URI/terms.lance          one row per word (and segment): the chunks holding it (see terms.py)

The manifest is written last and replaced atomically, so a reader that opens the tables at the
versions it names never sees half a build, and a killed build leaves the previous one intact.
Columns: schema.py; reading a build: reader.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import BTree, IvfPq

from .ids import doc_key
from .manifest import (
    FORMAT,
    FORMAT_VERSION,
    IndexStoreError,
    is_remote,
    missing_bucket,
    normalise_uri,
    read_manifest,
    write_manifest,
)
from .schema import (
    CHUNK_VECTORS,
    CHUNKS,
    SENTENCES,
    TABLES,
    TERMS,
    ChunkVectorColumn,
    SentenceColumn,
    chunk_vectors_schema,
    chunks_schema,
    sentences_schema,
)
from .terms import chunk_terms, invert, terms_schema

LOCK_FILE = ".arag-build.lock"
VECTOR_INDEX_MIN_ROWS = 200_000
"""Below this many sentences semantic search is exact (brute force, a few ms per 100k rows);
from here on an IVF-PQ index is built, and search re-ranks its candidates with the exact vectors.
Search probes 30 of its ~sqrt(rows) partitions and re-ranks 8x the candidates it needs: at 1M
sentences, over 150 questions (bench/speed.py's index and questions), recall@10 against exact search
was 0.946 at p50 28 ms on one training of the index and 0.961 on another, where 20 probes and 5x
gave 0.915 and 40 probes and 8x 0.963."""
VECTOR_SEARCH = {"nprobes": 30, "refine_factor": 8}
"""How search uses the vector index; recorded in the manifest with the index's own parameters."""


def _sql_list(values: Sequence[str]) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


def chunk_vector_table(chunk_ids: list[str], doc_keys: list[str], sums: np.ndarray) -> pa.Table:
    """Rows of the chunk_vectors table: each chunk's summed sentence vectors, normalised."""
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    vectors = (sums / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    v = ChunkVectorColumn
    return pa.table(
        {
            v.CHUNK_ID: pa.array(chunk_ids, pa.string()),
            v.DOC_KEY: pa.array(doc_keys, pa.string()),
            v.VECTOR: pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1]),
        },
        schema=chunk_vectors_schema(vectors.shape[1]),
    )


def chunk_vectors_of(sentence_rows: pa.Table) -> pa.Table:
    """A chunk's vector is the normalised mean of its sentence vectors (bench/README.md: why not its
    leading text); a batch holds whole chunks, so each chunk's sentences are all here."""
    s = SentenceColumn
    chunk_ids = sentence_rows[s.CHUNK_ID].to_pylist()
    order = list(dict.fromkeys(chunk_ids))
    position = {cid: at for at, cid in enumerate(order)}
    vectors = sentence_rows[s.VECTOR].combine_chunks().flatten().to_numpy().reshape(sentence_rows.num_rows, -1)
    sums = np.zeros((len(order), vectors.shape[1]), dtype=np.float32)
    np.add.at(sums, [position[cid] for cid in chunk_ids], vectors)
    keys = dict(zip(chunk_ids, sentence_rows[s.DOC_KEY].to_pylist()))
    return chunk_vector_table(order, [keys[cid] for cid in order], sums)


class IndexWriter:
    """Writes one build: starts from the last committed versions, commits by writing the manifest."""

    def __init__(self, uri: str, dimension: int, rebuild: bool = False) -> None:
        self.uri = normalise_uri(uri)
        self.dimension = dimension
        if not is_remote(self.uri):
            Path(self.uri).mkdir(parents=True, exist_ok=True)
        self.previous = None if rebuild else read_manifest(self.uri)
        self._db = lancedb.connect(self.uri)
        self.chunks = self._start_table(CHUNKS, chunks_schema())
        self.sentences = self._start_table(SENTENCES, sentences_schema(dimension))
        self.terms = self._start_table(TERMS, terms_schema())
        self.chunk_vectors = self._start_table(CHUNK_VECTORS, chunk_vectors_schema(dimension))

    def _start_table(self, name: str, schema: pa.Schema) -> Any:
        """The table as of the last commit; anything a killed build left behind is rolled back."""
        if self.previous is None:
            return self._db.create_table(name, schema=schema, mode="overwrite")
        if name not in self.previous["tables"]:
            return self._backfill(name, schema)
        table = self._db.open_table(name)
        committed = self.previous["tables"][name]
        if table.version != committed:
            table.restore(committed)
        return table

    def _backfill(self, name: str, schema: pa.Schema) -> Any:
        """A table the committed build predates, made from what it has (no sentence is embedded again)."""
        table = self._db.create_table(name, schema=schema, mode="overwrite")
        if name == CHUNK_VECTORS:
            s = SentenceColumn
            batches = self.sentences.search().select([s.CHUNK_ID, s.DOC_KEY, s.VECTOR]).limit(None).to_batches()
            sums: dict[str, np.ndarray] = {}
            keys: dict[str, str] = {}
            for batch in batches:
                vectors = batch[s.VECTOR].flatten().to_numpy().reshape(batch.num_rows, -1)
                for cid, key, vector in zip(batch[s.CHUNK_ID].to_pylist(), batch[s.DOC_KEY].to_pylist(), vectors):
                    sums[cid] = sums[cid] + vector if cid in sums else vector.astype(np.float32)
                    keys[cid] = key
            if sums:
                table.add(chunk_vector_table(list(sums), [keys[cid] for cid in sums], np.stack(list(sums.values()))))
        return table

    def existing_documents(self) -> dict[str, str]:
        """doc_id → content hash of every committed document."""
        if self.previous is None:
            return {}
        rows = self.chunks.search().where("ordinal = 0").select(["doc_id", "doc_hash"]).limit(None).to_arrow()
        return dict(zip(rows["doc_id"].to_pylist(), rows["doc_hash"].to_pylist()))

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        keys = [doc_key(doc_id) for doc_id in doc_ids]
        for first in range(0, len(keys), 1000):
            condition = f"doc_key IN ({_sql_list(keys[first : first + 1000])})"
            self.chunks.delete(condition)
            self.sentences.delete(condition)
            self.chunk_vectors.delete(condition)

    def add(self, chunk_rows: pa.Table, sentence_rows: pa.Table) -> None:
        """Append rows (the chunks' words and vectors are filled in here); sentences first."""
        terms, counts = chunk_terms(chunk_rows["text"])
        chunk_rows = chunk_rows.set_column(chunk_rows.schema.get_field_index("terms"), "terms", terms)
        chunk_rows = chunk_rows.set_column(chunk_rows.schema.get_field_index("term_counts"), "term_counts", counts)
        self.sentences.add(sentence_rows)
        self.chunk_vectors.add(chunk_vectors_of(sentence_rows))
        self.chunks.add(chunk_rows)

    def finish_tables(self) -> dict[str, Any] | None:
        """Compact fragments, keep the lookup indexes, and the vector index once the table is large.

        Returns the vector index's parameters (recorded in the manifest), or None for exact search.
        """
        for table in (self.chunks, self.sentences, self.chunk_vectors):
            table.optimize()
        self.chunks.create_index("chunk_id", config=BTree(), replace=True)
        self.chunks.create_index("doc_key", config=BTree(), replace=True)
        self.sentences.create_index("doc_key", config=BTree(), replace=True)
        self._write_terms()
        return self._vector_index()

    def _write_terms(self) -> None:
        """Rebuild the terms table from the chunks' words, numbering chunks by row id rank."""
        row_ids = np.sort(self.chunks.search().select([]).with_row_id(True).limit(None).to_arrow()["_rowid"].to_numpy())
        batches = self.chunks.search().select(["terms", "term_counts"]).with_row_id(True).limit(None).to_batches()
        numbered = (
            (np.searchsorted(row_ids, batch["_rowid"].to_numpy()), batch["terms"], batch["term_counts"])
            for batch in batches
        )
        mode = "overwrite"
        for segment in invert(numbered):
            self.terms.add(segment, mode=mode)
            mode = "append"
        if mode == "overwrite":
            self.terms.add(terms_schema().empty_table(), mode=mode)

    def _vector_index(self) -> dict[str, Any] | None:
        """Train the IVF-PQ index once; later builds add their rows to it (optimize)."""
        previous = self.previous and self.previous.get("vector_index")
        if previous:
            return previous
        rows = self.sentences.count_rows()
        if rows < VECTOR_INDEX_MIN_ROWS:
            return None
        params = {
            "type": "IVF_PQ",
            "num_partitions": max(64, int(rows**0.5)),
            "num_sub_vectors": max(1, self.dimension // 8),
            **VECTOR_SEARCH,
        }
        config = IvfPq(
            distance_type="dot", num_partitions=params["num_partitions"], num_sub_vectors=params["num_sub_vectors"]
        )
        self.sentences.create_index("vector", config=config, replace=True)
        return params

    def commit(self, manifest: dict[str, Any]) -> dict[str, Any]:
        manifest = {
            **manifest,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "tables": {name: getattr(self, name).version for name in TABLES},
        }
        write_manifest(self.uri, manifest)
        return manifest


@contextmanager
def build_lock(uri: str) -> Iterator[None]:
    """One builder at a time on a local index (object stores rely on the manifest commit)."""
    if is_remote(uri):
        problem = missing_bucket(uri)
        if problem:
            raise IndexStoreError(problem)
        yield
        return
    import fcntl

    Path(uri).mkdir(parents=True, exist_ok=True)
    with open(Path(uri, LOCK_FILE), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexStoreError(f"another arag-index build is running on {uri}; wait for it to finish") from None
        yield
