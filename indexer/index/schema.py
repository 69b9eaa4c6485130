"""The tables of an index and their columns: the one place their names are spelled.

Writers build rows against these schemas; readers (snapshot.py) name columns through the constants
below, so nothing outside the indexer knows how a column is stored. The Arrow schemas import
pyarrow when asked for: a server reads the names before its handshake, without loading Arrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

CHUNKS = "chunks"
SENTENCES = "sentences"
CHUNK_VECTORS = "chunk_vectors"
DOCUMENTS = "documents"
"""One row per document, for managing the index (list, remove, sync)."""
TABLES = (CHUNKS, SENTENCES, CHUNK_VECTORS, DOCUMENTS)
"""Every build has all of them."""


class ChunkColumn:
    """Columns of the chunks table: one row per chunk."""

    ID = "chunk_id"
    DOC_KEY = "doc_key"
    DOC_ID = "doc_id"
    DOC_HASH = "doc_hash"
    TITLE = "title"
    SOURCE = "source"
    PART = "part"
    """The chunk's place in its document, from 0."""
    PARTS = "parts"
    """How many chunks its document has."""
    TEXT = "text"
    TOKENS = "tokens"
    SENTENCE_STARTS = "sentence_starts"
    """Character offsets of the chunk's sentences in its text."""
    SENTENCE_ENDS = "sentence_ends"
    METADATA = "metadata"
    """The document's metadata as a JSON object, or "" for none."""
    TERMS = "terms"
    TERM_COUNTS = "term_counts"
    HEADING_PATH = "heading_path"
    """The headings the chunk's first character sits under, outermost first (empty for none)."""
    FIRST_PAGE = "first_page"
    """The page (from 1) of the chunk's first character; null for a document without pages."""
    LAST_PAGE = "last_page"
    """The page of its last character."""
    FILE_TYPE = "file_type"
    """What the document was read as ("md", "html", "jsonl", ...: readers.file_type)."""


class SentenceColumn:
    """Columns of the sentences table: one row per sentence, with its vector."""

    CHUNK_ID = "chunk_id"
    DOC_KEY = "doc_key"
    POSITION = "position"
    """The sentence's place in its chunk, from 0."""
    TEXT = "text"
    START = "start"
    END = "end"
    EMBED_KEY = "embed_key"
    """context.embedding_key of the text the sentence was embedded as: an edited document's
    sentences with an unchanged key keep their vectors (null: unknown, never reused)."""
    VECTOR = "vector"


class ChunkVectorColumn:
    """Columns of the chunk_vectors table: one vector per chunk, for Naive RAG's embedding search."""

    CHUNK_ID = "chunk_id"
    DOC_KEY = "doc_key"
    VECTOR = "vector"


class DocumentColumn:
    """Columns of the documents table."""

    ID = "doc_id"
    DOC_KEY = "doc_key"
    DOC_HASH = "doc_hash"
    TITLE = "title"
    SOURCE = "source"
    PATH = "path"
    """The resolved path of the file it was read from (never shown to models)."""
    CHUNKS = "chunks"
    SENTENCES = "sentences"
    INDEXED_AT = "indexed_at"


def chunks_schema() -> pa.Schema:
    import pyarrow as pa

    c = ChunkColumn
    return pa.schema(
        [
            pa.field(c.ID, pa.string(), nullable=False),
            pa.field(c.DOC_KEY, pa.string(), nullable=False),
            pa.field(c.DOC_ID, pa.string(), nullable=False),
            pa.field(c.DOC_HASH, pa.string(), nullable=False),
            pa.field(c.TITLE, pa.string()),
            pa.field(c.SOURCE, pa.string()),
            pa.field(c.PART, pa.int32(), nullable=False),
            pa.field(c.PARTS, pa.int32(), nullable=False),
            pa.field(c.TEXT, pa.string(), nullable=False),
            pa.field(c.TOKENS, pa.int32(), nullable=False),
            pa.field(c.SENTENCE_STARTS, pa.list_(pa.int32())),
            pa.field(c.SENTENCE_ENDS, pa.list_(pa.int32())),
            pa.field(c.METADATA, pa.string()),
            pa.field(c.TERMS, pa.list_(pa.string())),
            pa.field(c.TERM_COUNTS, pa.list_(pa.int32())),
            pa.field(c.HEADING_PATH, pa.list_(pa.string())),
            pa.field(c.FIRST_PAGE, pa.int32()),
            pa.field(c.LAST_PAGE, pa.int32()),
            pa.field(c.FILE_TYPE, pa.string()),
        ]
    )


def sentences_schema(dimension: int) -> pa.Schema:
    import pyarrow as pa

    s = SentenceColumn
    return pa.schema(
        [
            pa.field(s.CHUNK_ID, pa.string(), nullable=False),
            pa.field(s.DOC_KEY, pa.string(), nullable=False),
            pa.field(s.POSITION, pa.int32(), nullable=False),
            pa.field(s.TEXT, pa.string(), nullable=False),
            pa.field(s.START, pa.int32(), nullable=False),
            pa.field(s.END, pa.int32(), nullable=False),
            pa.field(s.EMBED_KEY, pa.int64()),
            pa.field(s.VECTOR, pa.list_(pa.float32(), dimension), nullable=False),
        ]
    )


def chunk_vectors_schema(dimension: int) -> pa.Schema:
    import pyarrow as pa

    v = ChunkVectorColumn
    return pa.schema(
        [
            pa.field(v.CHUNK_ID, pa.string(), nullable=False),
            pa.field(v.DOC_KEY, pa.string(), nullable=False),
            pa.field(v.VECTOR, pa.list_(pa.float32(), dimension), nullable=False),
        ]
    )


def documents_schema() -> pa.Schema:
    import pyarrow as pa

    d = DocumentColumn
    return pa.schema(
        [
            pa.field(d.ID, pa.string(), nullable=False),
            pa.field(d.DOC_KEY, pa.string(), nullable=False),
            pa.field(d.DOC_HASH, pa.string(), nullable=False),
            pa.field(d.TITLE, pa.string()),
            pa.field(d.SOURCE, pa.string()),
            pa.field(d.PATH, pa.string()),
            pa.field(d.CHUNKS, pa.int32(), nullable=False),
            pa.field(d.SENTENCES, pa.int32(), nullable=False),
            pa.field(d.INDEXED_AT, pa.string()),
        ]
    )
