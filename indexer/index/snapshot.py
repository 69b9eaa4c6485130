"""Reading a committed build: typed chunks, sentences and postings, at the versions its manifest names.

Everything outside the indexer reads an index through `open_index` and the `IndexSnapshot` it
returns; column names and manifest fields stay in here (schema.py, manifest.py).
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import writer
from .catalogue import HELD_COLUMNS, SENTENCE_COUNT, ChunkCatalogue
from .chunks import Chunk
from .document_lines import DocumentLines
from .ids import chunk_id, parse_chunk_id
from .manifest import IndexStoreError, Manifest, check_manifest, normalise_uri
from .schema import (
    CHUNK_VECTORS,
    CHUNKS,
    DOCUMENTS,
    SENTENCES,
    TERMS,
    ChunkColumn,
    ChunkVectorColumn,
    DocumentColumn,
    SentenceColumn,
    TermColumn,
    terms_schema,
)
from .terms import folded
from .vectors import SentenceMatches, SentenceVectors
from .words import UNSPACED_SCRIPTS, WORD_BREAK, unspaced

C = ChunkColumn
S = SentenceColumn
T = TermColumn
DOCUMENTS_KEPT = 8
EXACT_SCOPE_SENTENCES = 20_000
"""Above the IVF-PQ index's size, a scope of up to this many sentences is searched exactly from its
own vectors; a larger one through the index, filtered first, whose few probed partitions miss much
of a small scope. bench/scope.py at 1M sentences on 2 busy cores, p50 ms exact against filtered
index search (its recall@10): 500 sentences 7 against 15 (0.58); 5,000 30 against 22 (0.82);
20,000 86 against 35 (0.93); 50,000 182 against 79 (0.98); 250,000 771 against 156 (1.0). Up to
here a scoped search stays exact, under 100 ms."""
STORAGE_ERRORS = (OSError, RuntimeError, ValueError)
"""What LanceDB and Arrow raise for unreadable data (lance errors are RuntimeError or OSError)."""
TEXT_FIELDS = [C.TEXT, C.SENTENCE_STARTS, C.SENTENCE_ENDS]
"""What a chunk row adds to its header (held in the catalogue) to make a `Chunk`."""


@dataclass(frozen=True)
class KeywordLookup:
    """What keyword search keeps in memory: the vocabulary, and the words of the chunks' titles
    (titles count in whole-word matching; they are short, so their postings are derived here
    rather than stored). Postings name chunks by the catalogue's chunk numbers."""

    words: pa.Array
    """The distinct words of the terms table, sorted."""
    folded_spellings: dict[str, list[int]]
    """Folded form → positions in `words` of the non-ASCII words that fold to it (an ASCII word,
    stored lower-cased, is its own folded form): whole-word matching looks words up folded."""
    word_rows: np.ndarray
    """Row ids of the terms table, grouped by word in `words` order (a word has a row per segment)."""
    rows_per_word: np.ndarray
    word_row_starts: np.ndarray
    """Where each word's rows begin in `word_rows`."""
    chunk_count: int
    title_words: pa.Array
    """The folded words of every title, sorted."""
    title_owners: np.ndarray
    """Chunk number of each of `title_words`."""
    title_lengths: np.ndarray
    """How many words each chunk's title has, by chunk number."""
    unspaced_words: pa.Array
    """The folded forms of the words with letters of a script written without spaces (terms.py)."""
    unspaced_positions: np.ndarray
    """Where each of `unspaced_words` is in `words`."""
    unspaced_title_words: pa.Array
    """The folded title words with such letters, and the chunk number of each."""
    unspaced_title_owners: np.ndarray

    @classmethod
    def load(cls, uri: str, catalogue: ChunkCatalogue, terms: Any) -> KeywordLookup:
        with reading(uri, TERMS):
            rows = terms.search().select([T.TERM]).with_row_id(True).limit(None).to_arrow()
        by_word = pc.sort_indices(rows[T.TERM])
        sorted_words = rows[T.TERM].take(by_word).combine_chunks()
        first = np.ones(len(sorted_words), dtype=bool)
        if len(sorted_words):
            first[1:] = pc.not_equal(sorted_words[1:], sorted_words[:-1]).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(first)
        title_split = pc.split_pattern_regex(pc.utf8_lower(catalogue.titles), WORD_BREAK)
        title_words = pc.list_flatten(title_split)
        kept = pc.not_equal(title_words, "")
        title_words = folded(title_words.filter(kept))
        title_owners = pc.list_parent_indices(title_split).filter(kept).to_numpy().astype(np.int64)
        by_title_word = pc.sort_indices(title_words)
        words = sorted_words.filter(pa.array(first))
        other = np.flatnonzero(~pc.string_is_ascii(words).to_numpy(zero_copy_only=False))
        other_folded = folded(words.take(pa.array(other, pa.int64())))
        spellings: dict[str, list[int]] = {}
        for at, word in zip(other.tolist(), other_folded.to_pylist()):
            spellings.setdefault(word, []).append(at)
        unspaced_words = _has_unspaced(other_folded)
        unspaced_titles = _has_unspaced(title_words)
        return cls(
            words,
            spellings,
            rows["_rowid"].to_numpy()[by_word.to_numpy()],
            np.diff(np.append(starts, len(sorted_words))),
            starts,
            len(catalogue),
            title_words.take(by_title_word),
            title_owners[by_title_word.to_numpy()],
            np.bincount(title_owners, minlength=len(catalogue)),
            other_folded.filter(pa.array(unspaced_words)),
            other[unspaced_words],
            title_words.filter(pa.array(unspaced_titles)),
            title_owners[unspaced_titles],
        )

    def rows_containing(self, piece: str) -> np.ndarray:
        """Terms-table row ids of every word that contains `piece` (lower-cased)."""
        matched = pc.match_substring(self.words, pattern=piece).to_numpy(zero_copy_only=False)
        return self.word_rows[np.repeat(matched, self.rows_per_word)]

    def spellings(self, folded_word: str) -> list[int]:
        """Positions in `words` of the words whose folded form is `folded_word` (found by bisection)."""
        found = list(self.folded_spellings.get(folded_word, ()))
        if folded_word.isascii():
            at = bisect.bisect_left(self.words, folded_word, key=_text)
            if at < len(self.words) and self.words[at].as_py() == folded_word:
                found.append(at)
        return found

    def rows_of_word(self, folded_word: str) -> np.ndarray:
        """Terms-table row ids of every word whose folded form is `folded_word`, or, for a word of
        a script written without spaces, holds it."""
        if unspaced(folded_word):
            holding = pc.match_substring(self.unspaced_words, pattern=folded_word).to_numpy(zero_copy_only=False)
            positions = self.unspaced_positions[holding].tolist()
        else:
            positions = self.spellings(folded_word)
        starts, lengths = self.word_row_starts, self.rows_per_word
        spans = [self.word_rows[starts[at] : starts[at] + lengths[at]] for at in positions]
        return np.concatenate([self.word_rows[:0], *spans])

    def title_counts(self, folded_word: str) -> np.ndarray:
        """How often each chunk's title holds the word `folded_word` (folded; for a word of a script
        written without spaces, its characters in a row inside a title's word), by chunk number."""
        if unspaced(folded_word):
            inside = pc.count_substring(self.unspaced_title_words, pattern=folded_word).to_numpy(zero_copy_only=False)
            return np.bincount(self.unspaced_title_owners, weights=inside, minlength=self.chunk_count).astype(np.int64)
        first = bisect.bisect_left(self.title_words, folded_word, key=_text)
        last = bisect.bisect_right(self.title_words, folded_word, lo=first, key=_text)
        return np.bincount(self.title_owners[first:last], minlength=self.chunk_count).astype(np.int64)


def _text(value: pa.Scalar) -> str:
    return value.as_py()


def _has_unspaced(folded_words: pa.Array) -> np.ndarray:
    """Which of these folded words have letters of a script written without spaces (the regex runs
    on the non-ASCII words alone: most of a large vocabulary is ASCII)."""
    found = ~pc.string_is_ascii(folded_words).to_numpy(zero_copy_only=False)
    other = np.flatnonzero(found)
    if len(other):
        inside = pc.match_substring_regex(folded_words.take(pa.array(other)), f"[{UNSPACED_SCRIPTS}]")
        found[other] = inside.to_numpy(zero_copy_only=False)
    return found


@dataclass(frozen=True)
class IndexSnapshot:
    """One committed build, opened read-only at the table versions its manifest names."""

    uri: str
    manifest: Manifest
    chunk_table: Any
    sentence_table: Any
    term_table: Any
    chunk_vector_table: Any
    catalogue: ChunkCatalogue
    keywords: KeywordLookup
    vectors: SentenceVectors | None
    """Exact search in memory, below the size where the IVF-PQ index answers (None above it)."""
    _documents: OrderedDict[str, DocumentLines] = field(default_factory=OrderedDict, repr=False, compare=False)

    @property
    def version(self) -> tuple[int, ...]:
        return tuple(self.manifest.tables.values())

    @property
    def chunk_count(self) -> int:
        return len(self.catalogue)

    def chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks with these ids, keyed by id (unknown or malformed ids are absent)."""
        wanted = [cid for cid in chunk_ids if parse_chunk_id(cid)]
        return {chunk.chunk_id: chunk for chunk in self.chunks_at(self.catalogue.numbers_of(wanted)).values()}

    def chunks_at(self, numbers: np.ndarray) -> dict[int, Chunk]:
        """The chunks with these chunk numbers, keyed by number: their headers from the catalogue,
        their texts read."""
        table = self._rows_at(numbers, TEXT_FIELDS)
        found = table["number"].to_numpy()
        return {
            int(number): Chunk(
                **vars(header),
                text=row[C.TEXT],
                sentence_spans=tuple(zip(row[C.SENTENCE_STARTS] or [], row[C.SENTENCE_ENDS] or [])),
            )
            for number, header, row in zip(found, self.catalogue.headers_at(found), table.to_pylist())
        }

    def texts_at(self, numbers: np.ndarray) -> tuple[np.ndarray, pa.ChunkedArray]:
        """(chunk numbers, texts) of these chunks, in no particular order: the text column alone."""
        table = self._rows_at(numbers, [C.TEXT])
        return table["number"].to_numpy(), table[C.TEXT]

    def all_chunks(self) -> list[Chunk]:
        """Every chunk, in chunk-number order (for reference scorers and benchmarks)."""
        return list(self.chunks_at(np.arange(self.chunk_count)).values())

    def _rows_at(self, numbers: np.ndarray, columns: Sequence[str]) -> pa.Table:
        numbers = np.asarray(numbers, dtype=np.int64)
        if not len(numbers):
            schema = pa.schema([*(self.chunk_table.schema.field(c) for c in columns), pa.field("number", pa.int64())])
            return schema.empty_table()
        row_ids = self.catalogue.row_ids[numbers]
        with reading(self.uri, CHUNKS):
            table = self.chunk_table.take_row_ids(row_ids.tolist()).select(list(columns)).with_row_id().to_arrow()
        found = np.searchsorted(self.catalogue.row_ids, table["_rowid"].to_numpy())
        table = table.drop_columns(["_rowid"]).append_column("number", pa.array(found, pa.int64()))
        return table.take(pc.sort_indices(table["number"]))

    def postings(self, row_ids: np.ndarray) -> pa.Table:
        """Rows (term, chunks, counts) of the terms table with these row ids."""
        if not len(row_ids):
            return terms_schema().empty_table()
        with reading(self.uri, TERMS):
            return self.term_table.take_row_ids(row_ids.tolist()).select(terms_schema().names).to_arrow()

    def nearest_sentences(self, vector: np.ndarray, limit: int, scope: np.ndarray | None = None) -> SentenceMatches:
        """The `limit` sentences with the highest cosine similarity to `vector` (a dot product:
        vectors are unit length): exact, in memory, below the IVF-PQ index's size; through the
        index above it (`_distance`, 1 - dot, is asked for by name, as LanceDB requires). With
        `scope` (a mask over chunk numbers), among its chunks' sentences only: above the index's
        size, a scope of up to EXACT_SCOPE_SENTENCES is searched exactly from its own vectors,
        a larger one through the index, filtered before the search."""
        if self.vectors is not None:
            with reading(self.uri, SENTENCES):
                return self.vectors.nearest(vector, limit, scope)
        if scope is not None and self.sentence_count(scope) <= EXACT_SCOPE_SENTENCES:
            found = self._nearest_in(vector, limit, self.scope_documents(scope))
        else:
            search = self.sentence_table.search(vector.astype(np.float32)).distance_type("dot").limit(limit)
            if scope is not None:
                search = search.where(
                    f"{S.DOC_KEY} IN ({writer.sql_list(self.scope_documents(scope))})", prefilter=True
                )
            vector_index = self.manifest.vector_index
            if vector_index:
                search = search.nprobes(vector_index["nprobes"]).refine_factor(vector_index["refine_factor"])
            with reading(self.uri, SENTENCES):
                found = search.select([S.CHUNK_ID, S.POSITION, S.TEXT, "_distance"]).to_arrow()
        numbers, known = self.catalogue.locate(found[S.CHUNK_ID].to_numpy(zero_copy_only=False))
        return SentenceMatches(
            numbers[known],
            found[S.POSITION].to_numpy()[known],
            [text for text, kept in zip(found[S.TEXT].to_pylist(), known) if kept],
            (1.0 - found["_distance"].to_numpy().astype(np.float64))[known],
        )

    def scope_documents(self, scope: np.ndarray) -> list[str]:
        """The keys of the documents a scope's chunks belong to (scopes select whole documents)."""
        return pc.unique(self.catalogue.labels[C.DOC_KEY].filter(pa.array(scope))).to_pylist()

    def sentence_count(self, scope: np.ndarray | None = None) -> int:
        """How many sentences the index holds, or the chunks of `scope` (a mask over chunk numbers) hold."""
        if scope is None:
            return self.manifest.counts.sentences
        return int(self.catalogue.labels[SENTENCE_COUNT].to_numpy()[scope].sum())

    def _nearest_in(self, vector: np.ndarray, limit: int, doc_keys: Sequence[str]) -> pa.Table:
        """Exact search over these documents' sentences, read with their vectors (the doc key is
        indexed), as the index search reports it."""
        with reading(self.uri, SENTENCES):
            rows = (
                self.sentence_table.search()
                .where(f"{S.DOC_KEY} IN ({writer.sql_list(doc_keys)})")
                .select([S.CHUNK_ID, S.POSITION, S.TEXT, S.VECTOR])
                .limit(None)
                .to_arrow()
            )
        vectors = rows[S.VECTOR].combine_chunks().flatten().to_numpy().reshape(rows.num_rows, -1)
        scores = vectors @ vector.astype(np.float32)
        best = np.argsort(-scores, kind="stable")[:limit]
        found = rows.select([S.CHUNK_ID, S.POSITION, S.TEXT]).take(best)
        return found.append_column("_distance", pa.array(1.0 - scores[best], pa.float32()))

    def document(self, ref: str) -> DocumentLines | None:
        """The document a reference names (its key, or the id of any of its chunks), as numbered
        lines; None when there is no such document. The last few are kept for repeated calls."""
        key = ref.strip()
        parsed = parse_chunk_id(key)
        if parsed:
            key = parsed[0]
        if key in self._documents:
            self._documents.move_to_end(key)
            return self._documents[key]
        head = self.chunks([chunk_id(key, 0)]).get(chunk_id(key, 0))
        if head is None:
            return None
        rest = self.chunks([chunk_id(key, part) for part in range(1, head.parts)])
        chunks = [head, *(rest[chunk_id(key, part)] for part in range(1, head.parts))]
        document = self._documents[key] = DocumentLines.from_chunks(key, chunks)
        while len(self._documents) > DOCUMENTS_KEPT:
            self._documents.popitem(last=False)
        return document

    def document_sentences(self, document: DocumentLines) -> tuple[list[str], list[int], np.ndarray]:
        """(chunk id, start offset in its chunk, vector) of every sentence of `document`."""
        with reading(self.uri, SENTENCES):
            table = (
                self.sentence_table.search()
                .where(f"{S.DOC_KEY} = '{document.doc_key}'")
                .select([S.CHUNK_ID, S.START, S.VECTOR])
                .limit(None)
                .to_arrow()
            )
        vectors = np.asarray(table[S.VECTOR].combine_chunks().flatten().to_numpy(), dtype=np.float32)
        return table[S.CHUNK_ID].to_pylist(), table[S.START].to_pylist(), vectors.reshape(table.num_rows, -1)

    def nearest_chunks(
        self, vector: np.ndarray, limit: int, scope: np.ndarray | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the `limit` chunks whose vector is nearest `vector`, best
        first; with `scope` (a mask over chunk numbers), among its chunks only (filtered before the
        search, which scans every vector: the table has no vector index)."""
        v = ChunkVectorColumn
        search = self.chunk_vector_table.search(vector.astype(np.float32), vector_column_name=v.VECTOR)
        if scope is not None:
            search = search.where(f"{v.DOC_KEY} IN ({writer.sql_list(self.scope_documents(scope))})", prefilter=True)
        with reading(self.uri, CHUNK_VECTORS):
            found = search.distance_type("dot").limit(limit).select([v.CHUNK_ID, "_distance"]).to_arrow()
        return list(zip(found[v.CHUNK_ID].to_pylist(), (1.0 - found["_distance"].to_numpy()).tolist()))

    def chunk_vectors(self) -> tuple[list[str], np.ndarray]:
        """(chunk id, vector) of every chunk: for reference scorers."""
        v = ChunkVectorColumn
        table = self.chunk_vector_table.search().select([v.CHUNK_ID, v.VECTOR]).limit(None).to_arrow()
        vectors = np.asarray(table[v.VECTOR].combine_chunks().flatten().to_numpy(), dtype=np.float32)
        return table[v.CHUNK_ID].to_pylist(), vectors.reshape(table.num_rows, -1)

    def sentence_vectors(self) -> tuple[list[str], np.ndarray]:
        """(chunk id of each sentence, its vector) for every sentence, for reference scorers: read
        batch by batch into one float32 matrix, so the vectors are held once."""
        matrix = np.empty((self.sentence_table.count_rows(), self.manifest.dimension), np.float32)
        chunk_ids: list[str] = []
        with reading(self.uri, SENTENCES):
            for batch in self.sentence_table.search().select([S.CHUNK_ID, S.VECTOR]).limit(None).to_batches():
                vectors = batch.column(S.VECTOR).flatten().to_numpy()
                matrix[len(chunk_ids) : len(chunk_ids) + batch.num_rows] = vectors.reshape(batch.num_rows, -1)
                chunk_ids += batch.column(S.CHUNK_ID).to_pylist()
        return chunk_ids, matrix


def open_index(uri: str, previous: IndexSnapshot | None = None) -> IndexSnapshot:
    """Open the committed build at `uri` read-only; IndexStoreError says what is wrong.

    Exact search reuses the in-memory vectors of `previous` (an earlier build of the same index)
    for the documents this build left unchanged."""
    uri = normalise_uri(uri)
    manifest = check_manifest(uri)
    db = lancedb.connect(uri)
    tables: dict[str, Any] = {}
    for name in manifest.tables:
        with reading(uri, name):
            tables[name] = db.open_table(name)
            tables[name].checkout(manifest.tables[name])
    with reading(uri, CHUNKS):
        columns = [*HELD_COLUMNS, C.SENTENCE_STARTS]
        rows = tables[CHUNKS].search().select(columns).with_row_id(True).limit(None).to_arrow()
    catalogue = ChunkCatalogue.from_rows(rows)
    keywords = KeywordLookup.load(uri, catalogue, tables[TERMS])
    with reading(uri, SENTENCES):  # every data file is opened: a damaged build is refused here, not mid-search
        tables[SENTENCES].search().select([S.POSITION]).limit(None).to_arrow()
    vectors = None
    if not manifest.vector_index or manifest.counts.sentences < writer.VECTOR_INDEX_MIN_ROWS:
        vectors = SentenceVectors(tables[SENTENCES], tables[CHUNKS], catalogue, manifest, previous and previous.vectors)
    return IndexSnapshot(
        uri,
        manifest,
        tables[CHUNKS],
        tables[SENTENCES],
        tables[TERMS],
        tables[CHUNK_VECTORS],
        catalogue,
        keywords,
        vectors,
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
    with reading(uri, DOCUMENTS):
        table = lancedb.connect(uri).open_table(DOCUMENTS)
        table.checkout(manifest.tables[DOCUMENTS])
        rows = table.search().select(list(LISTED_COLUMNS)).limit(None).to_arrow()
    return rows.sort_by([(DocumentColumn.SOURCE, "ascending"), (DocumentColumn.ID, "ascending")]).to_pylist()


@contextmanager
def reading(uri: str, table: str) -> Iterator[None]:
    """A storage failure while reading `table` becomes one line naming the table and the fix.

    LanceDB reports a deleted or truncated data file as a long message with internal paths; the
    reader knows which table it was reading, which is what the user needs.
    """
    try:
        yield
    except STORAGE_ERRORS as exc:
        raise IndexStoreError(
            f"{uri}: table {table!r} is damaged ({_damage(exc)}); "
            f"rebuild the index with `arag-index build SOURCE... --index {uri} --rebuild`"
        ) from None


def _damage(exc: Exception) -> str:
    """What is wrong, in a few words free of paths."""
    message = str(exc).lower()
    if "no longer exist" in message:
        return "the committed table version is gone"
    if any(sign in message for sign in ("not found", "no such file", "does not exist")):
        return "a data file is missing"
    return "a data file cannot be read"
