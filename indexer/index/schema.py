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

    return pa.schema(
        [
            pa.field(ChunkColumn.ID, pa.string(), nullable=False),
            pa.field(ChunkColumn.DOC_KEY, pa.string(), nullable=False),
            pa.field(ChunkColumn.DOC_ID, pa.string(), nullable=False),
            pa.field(ChunkColumn.DOC_HASH, pa.string(), nullable=False),
            pa.field(ChunkColumn.TITLE, pa.string()),
            pa.field(ChunkColumn.SOURCE, pa.string()),
            pa.field(ChunkColumn.PART, pa.int32(), nullable=False),
            pa.field(ChunkColumn.PARTS, pa.int32(), nullable=False),
            pa.field(ChunkColumn.TEXT, pa.string(), nullable=False),
            pa.field(ChunkColumn.TOKENS, pa.int32(), nullable=False),
            pa.field(ChunkColumn.SENTENCE_STARTS, pa.list_(pa.int32())),
            pa.field(ChunkColumn.SENTENCE_ENDS, pa.list_(pa.int32())),
            pa.field(ChunkColumn.METADATA, pa.string()),
            pa.field(ChunkColumn.TERMS, pa.list_(pa.string())),
            pa.field(ChunkColumn.TERM_COUNTS, pa.list_(pa.int32())),
            pa.field(ChunkColumn.HEADING_PATH, pa.list_(pa.string())),
            pa.field(ChunkColumn.FIRST_PAGE, pa.int32()),
            pa.field(ChunkColumn.LAST_PAGE, pa.int32()),
            pa.field(ChunkColumn.FILE_TYPE, pa.string()),
        ]
    )


def sentences_schema(dimension: int) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(SentenceColumn.CHUNK_ID, pa.string(), nullable=False),
            pa.field(SentenceColumn.DOC_KEY, pa.string(), nullable=False),
            pa.field(SentenceColumn.POSITION, pa.int32(), nullable=False),
            pa.field(SentenceColumn.TEXT, pa.string(), nullable=False),
            pa.field(SentenceColumn.START, pa.int32(), nullable=False),
            pa.field(SentenceColumn.END, pa.int32(), nullable=False),
            pa.field(SentenceColumn.EMBED_KEY, pa.int64()),
            pa.field(SentenceColumn.VECTOR, pa.list_(pa.float32(), dimension), nullable=False),
        ]
    )


def chunk_vectors_schema(dimension: int) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(ChunkVectorColumn.CHUNK_ID, pa.string(), nullable=False),
            pa.field(ChunkVectorColumn.DOC_KEY, pa.string(), nullable=False),
            pa.field(ChunkVectorColumn.VECTOR, pa.list_(pa.float32(), dimension), nullable=False),
        ]
    )


def documents_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(DocumentColumn.ID, pa.string(), nullable=False),
            pa.field(DocumentColumn.DOC_KEY, pa.string(), nullable=False),
            pa.field(DocumentColumn.DOC_HASH, pa.string(), nullable=False),
            pa.field(DocumentColumn.TITLE, pa.string()),
            pa.field(DocumentColumn.SOURCE, pa.string()),
            pa.field(DocumentColumn.PATH, pa.string()),
            pa.field(DocumentColumn.CHUNKS, pa.int32(), nullable=False),
            pa.field(DocumentColumn.SENTENCES, pa.int32(), nullable=False),
            pa.field(DocumentColumn.INDEXED_AT, pa.string()),
        ]
    )
