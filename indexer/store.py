"""The index format: two LanceDB tables and a manifest that commits a build.

Layout of an index at URI (a local folder or an object-store URI such as ``s3://bucket/idx``)::

    URI/manifest.json        what was built, and which table versions make up the index
    URI/chunks.lance         one row per chunk (text, document, neighbours by id, its words)
    URI/sentences.lance      one row per sentence (chunk id, offsets, vector)
    URI/terms.lance          one row per word (and segment): the chunks holding it (see terms.py)

The manifest is written last and replaced atomically, so a reader that opens the tables at the
versions it names never sees half a build, and a killed build leaves the previous one intact.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.index import BTree, IvfPq

from .ids import doc_key
from .manifest import (
    FORMAT,
    FORMAT_VERSION,
    IndexStoreError,
    check_manifest,
    is_remote,
    missing_bucket,
    normalise_uri,
    read_manifest,
    write_manifest,
)
from .terms import chunk_terms, invert, terms_schema
from .vectors import HELD_COLUMNS, SentenceVectors

CHUNKS = "chunks"
SENTENCES = "sentences"
TERMS = "terms"
TABLES = (CHUNKS, SENTENCES, TERMS)
LOCK_FILE = ".arag-build.lock"
VECTOR_INDEX_MIN_ROWS = 200_000
"""Below this many sentences semantic search is exact (vectors.py: a float32 matrix in memory);
from here on an IVF-PQ index is built, and search re-ranks its candidates with the exact vectors.
The crossover: at 200k sentences (bench/speed.py --chunks 20000, one run on 2 busy cores) the
whole semantic_search took p50 38 ms through the IVF-PQ index (recall@10 0.958) against 88 ms
exact in memory, whose matrix alone would then hold 300 MB.
Search probes 60 of its ~sqrt(rows) partitions and re-ranks 10x the candidates it needs: at 1M
sentences, over 150 questions (bench/speed.py's index and questions), recall@10 of semantic_search
against exact search and its p50 on 2 busy cores were, on one training of the index: 30 probes / 8x
0.938 (19.6 ms), 40 / 8x 0.949 (20.2 ms), 50 / 10x 0.958 (23.0 ms), 60 / 10x 0.960 (24.2 ms),
80 / 10x 0.972 (27.0 ms); another training gave 0.961 at 30 / 8x."""
VECTOR_SEARCH = {"nprobes": 60, "refine_factor": 10}
"""How search uses the vector index; recorded in the manifest with the index's own parameters."""


def chunks_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("doc_key", pa.string(), nullable=False),
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("doc_hash", pa.string(), nullable=False),
            pa.field("title", pa.string()),
            pa.field("source", pa.string()),
            pa.field("ordinal", pa.int32(), nullable=False),
            pa.field("doc_chunks", pa.int32(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("tokens", pa.int32(), nullable=False),
            pa.field("sentence_starts", pa.list_(pa.int32())),
            pa.field("sentence_ends", pa.list_(pa.int32())),
            pa.field("metadata", pa.string()),
            pa.field("terms", pa.list_(pa.string())),
            pa.field("term_counts", pa.list_(pa.int32())),
        ]
    )


def sentences_schema(dimension: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("doc_key", pa.string(), nullable=False),
            pa.field("ordinal", pa.int32(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("start", pa.int32(), nullable=False),
            pa.field("end", pa.int32(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dimension), nullable=False),
        ]
    )


@dataclass(frozen=True)
class KeywordLookup:
    """What a snapshot keeps in memory: the vocabulary, and the chunk numbers postings use with the
    chunk ids they stand for (chunk rows are read by number, whether found by keyword or by id)."""

    words: pa.Array
    """The distinct words of the terms table, sorted."""
    word_rows: np.ndarray
    """Row ids of the terms table, grouped by word in `words` order (a word has a row per segment)."""
    rows_per_word: np.ndarray
    chunk_ids: pa.Array
    """Chunk id by chunk number."""
    chunk_row_ids: np.ndarray
    """Ascending LanceDB row id by chunk number."""
    chunk_id_rank: np.ndarray
    """Position of each chunk number's id in sorted id order (ties are ranked by chunk id)."""
    numbers_by_id: np.ndarray
    """Chunk numbers in sorted id order (the inverse of chunk_id_rank): ids are found by bisection."""

    @classmethod
    def load(cls, chunks: Any, terms: Any) -> KeywordLookup:
        rows = terms.search().select(["term"]).with_row_id(True).limit(None).to_arrow()
        by_word = pc.sort_indices(rows["term"])
        sorted_words = rows["term"].take(by_word).combine_chunks()
        first = np.ones(len(sorted_words), dtype=bool)
        if len(sorted_words):
            first[1:] = pc.not_equal(sorted_words[1:], sorted_words[:-1]).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(first)
        numbered = chunks.search().select(["chunk_id"]).with_row_id(True).limit(None).to_arrow()
        numbered = numbered.sort_by("_rowid")
        chunk_ids = numbered["chunk_id"].combine_chunks()
        by_id = pc.sort_indices(chunk_ids).to_numpy()
        rank = np.empty(len(chunk_ids), dtype=np.int64)
        rank[by_id] = np.arange(len(chunk_ids))
        return cls(
            sorted_words.filter(pa.array(first)),
            rows["_rowid"].to_numpy()[by_word.to_numpy()],
            np.diff(np.append(starts, len(sorted_words))),
            chunk_ids,
            numbered["_rowid"].to_numpy(),
            rank,
            by_id,
        )

    def rows_containing(self, piece: str) -> np.ndarray:
        """Terms-table row ids of every word that contains `piece` (lower-cased)."""
        matched = pc.match_substring(self.words, pattern=piece).to_numpy(zero_copy_only=False)
        return self.word_rows[np.repeat(matched, self.rows_per_word)]

    def numbers_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Chunk numbers of these ids, in the order given; ids not in the index are left out."""
        numbers = []
        for wanted in chunk_ids:
            at = bisect.bisect_left(self.numbers_by_id, wanted, key=self._id_of)
            if at < len(self.numbers_by_id) and self._id_of(self.numbers_by_id[at]) == wanted:
                numbers.append(self.numbers_by_id[at])
        return np.array(numbers, dtype=np.int64)

    def _id_of(self, number: np.integer) -> str:
        return self.chunk_ids[int(number)].as_py()


@dataclass(frozen=True)
class IndexSnapshot:
    """One committed build, opened read-only at the table versions its manifest names."""

    uri: str
    manifest: dict[str, Any]
    chunks: Any
    sentences: Any
    terms: Any
    keywords: KeywordLookup
    vectors: SentenceVectors | None
    """Exact search in memory, below the size where the IVF-PQ index answers (None above it)."""

    @property
    def version(self) -> tuple[int, ...]:
        return tuple(self.manifest["tables"][name] for name in TABLES)

    def chunk_rows(self, chunk_ids: Sequence[str], columns: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Rows of the chunks with these ids, keyed by id (unknown ids are absent)."""
        table = self.chunks_at(self.keywords.numbers_of(chunk_ids), list(dict.fromkeys(["chunk_id", *columns])))
        return {row["chunk_id"]: row for row in table.drop_columns(["number"]).to_pylist()}

    def chunks_at(self, numbers: np.ndarray, columns: Sequence[str]) -> pa.Table:
        """Rows of the chunks with these numbers, with their `number`, in no particular order."""
        if not len(numbers):
            schema = pa.schema([*(self.chunks.schema.field(c) for c in columns), pa.field("number", pa.int64())])
            return schema.empty_table()
        row_ids = self.keywords.chunk_row_ids[numbers]
        table = self.chunks.take_row_ids(row_ids.tolist()).select(list(columns)).with_row_id().to_arrow()
        found = np.searchsorted(self.keywords.chunk_row_ids, table["_rowid"].to_numpy())
        return table.drop_columns(["_rowid"]).append_column("number", pa.array(found, pa.int64()))

    def postings(self, row_ids: np.ndarray) -> pa.Table:
        """Rows (term, chunks, counts) of the terms table with these row ids."""
        if not len(row_ids):
            return terms_schema().empty_table()
        return self.terms.take_row_ids(row_ids.tolist()).select(["term", "chunks", "counts"]).to_arrow()

    def nearest_sentences(self, vector: np.ndarray, limit: int, columns: Sequence[str]) -> pa.Table:
        """The `limit` sentences with the highest dot product (cosine: vectors are unit length), with
        `columns` and `_distance` (1 - cosine), asked for by name: LanceDB stops adding it unasked."""
        if self.vectors is not None and set(columns) <= set(HELD_COLUMNS):
            return self.vectors.nearest(vector, limit, list(columns))
        search = self.sentences.search(vector.astype(np.float32)).distance_type("dot").limit(limit)
        vector_index = self.manifest.get("vector_index")
        if vector_index:
            search = search.nprobes(vector_index["nprobes"]).refine_factor(vector_index["refine_factor"])
        return search.select([*columns, "_distance"]).to_arrow()


def open_index(uri: str, previous: IndexSnapshot | None = None) -> IndexSnapshot:
    """Open the committed build at `uri` read-only; IndexStoreError says what is wrong.

    Exact search reuses the in-memory vectors of `previous` (an earlier build of the same index)
    for the documents this build left unchanged."""
    uri = normalise_uri(uri)
    manifest = check_manifest(uri)
    db = lancedb.connect(uri)
    tables = {}
    for name in TABLES:
        try:
            table = db.open_table(name)
            table.checkout(manifest["tables"][name])
        except Exception as exc:  # noqa: BLE001 - any storage failure means the index is unusable
            raise IndexStoreError(
                f"{uri}: table {name!r} cannot be opened ({exc}); rebuild with `arag-index build ... --rebuild`"
            ) from None
        tables[name] = table
    keywords = KeywordLookup.load(tables[CHUNKS], tables[TERMS])
    vectors = None
    if not manifest.get("vector_index") or manifest["counts"]["sentences"] < VECTOR_INDEX_MIN_ROWS:
        vectors = SentenceVectors(tables[SENTENCES], tables[CHUNKS], manifest, previous and previous.vectors)
    return IndexSnapshot(uri, manifest, tables[CHUNKS], tables[SENTENCES], tables[TERMS], keywords, vectors)


def _sql_list(values: Sequence[str]) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


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

    def _start_table(self, name: str, schema: pa.Schema) -> Any:
        """The table as of the last commit; anything a killed build left behind is rolled back."""
        if self.previous is None:
            return self._db.create_table(name, schema=schema, mode="overwrite")
        table = self._db.open_table(name)
        committed = self.previous["tables"][name]
        if table.version != committed:
            table.restore(committed)
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

    def add(self, chunk_rows: pa.Table, sentence_rows: pa.Table) -> None:
        """Append rows (the chunks' words are filled in here); sentences first."""
        terms, counts = chunk_terms(chunk_rows["text"])
        chunk_rows = chunk_rows.set_column(chunk_rows.schema.get_field_index("terms"), "terms", terms)
        chunk_rows = chunk_rows.set_column(chunk_rows.schema.get_field_index("term_counts"), "term_counts", counts)
        self.sentences.add(sentence_rows)
        self.chunks.add(chunk_rows)

    def finish_tables(self) -> dict[str, Any] | None:
        """Compact fragments, keep the lookup indexes, and the vector index once the table is large.

        Returns the vector index's parameters (recorded in the manifest), or None for exact search.
        """
        for table in (self.chunks, self.sentences):
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
