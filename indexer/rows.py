"""A document's rows: its sentences cut and packed into chunks, the rows of each table, and their vectors.

One way for every build: the local build and the Ray workers (ray_build.py) both turn documents
into rows here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone

import numpy as np
import pyarrow as pa
from arag_mcp.indexer.embedding.embedder import Embedder
from arag_mcp.indexer.index.ids import chunk_id, doc_key
from arag_mcp.indexer.index.schema import ChunkColumn, DocumentColumn, SentenceColumn, chunks_schema, documents_schema
from arag_mcp.indexer.sources.document import Document
from arag_mcp.indexer.sources.outline import HeadingMarks, heading_path, page_range
from arag_mcp.indexer.text.chunking import Span, pack_chunks, sentence_spans
from arag_mcp.indexer.text.context import chunk_context_terms, embedding_key, embedding_text, with_neighbours

EMBED_SLICE_BATCHES = 8
"""Model batches embedded between two progress updates."""


def content_hash(document: Document) -> str:
    """What a document's rows are made from; a reader's own sentences count only where it gives them,
    so documents read by the prose rules keep the hash they had."""
    parts = [document.title, document.source, document.text, document.metadata, document.headings, document.pages]
    payload = json.dumps(parts + ([document.sentences] if document.sentences else []), sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


class RowBatch:
    """Rows of newly chunked documents waiting to be embedded and written. One batch serves a
    whole build (or a Ray worker's call), emptied in place by each write: a document being queued keeps adding to it."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.chunks: list[dict] = []
        self.sentences: list[dict] = []
        self.embed_texts: list[str] = []
        self.known_vectors: list[np.ndarray | None] = []
        """By sentence: the vector an earlier version of its document holds for the same embedded
        text (None: to embed)."""
        self.documents: list[dict] = []
        self.stale: list[str] = []

    @property
    def to_embed(self) -> int:
        """Sentences queued whose vectors are not known."""
        return sum(vector is None for vector in self.known_vectors)


def chunk_document(document: Document, embedder: Embedder, chunk_tokens: int) -> list[list[Span]]:
    """A document's sentences, packed into chunks."""
    spans = sentence_spans(
        document.text,
        embedder.count_tokens,
        embedder.token_offsets,
        sentence_limit(embedder, chunk_tokens),
        document.sentences,
    )
    return pack_chunks(spans, chunk_tokens, major_section_starts(document.headings))


def major_section_starts(headings: HeadingMarks) -> frozenset[int]:
    """Where the sections of the top two heading levels begin: chunks prefer to start there."""
    return frozenset(offset for offset, path in headings if len(path) <= 2)


def chunk_section(document: Document, spans: Sequence[Span]) -> tuple[str, ...]:
    """The heading path a chunk's first character sits under; for code before any definition (a
    module's imports and docstring), the first definition the chunk holds, which names it better
    than nothing does."""
    path = heading_path(document.headings, spans[0].start)
    if path or not document.sentences:
        return path
    inside = (heading for offset, heading in document.headings if spans[0].start <= offset < spans[-1].end)
    return next(inside, ())


def chunk_begins(document: Document, chunks: Sequence[Sequence[Span]]) -> list[int]:
    """Where each chunk's text begins: at its first sentence; in a document its reader cut into
    lines (code), at the line after the previous chunk's last, so that a chunk keeps its first
    line's indent and the blank lines before it, and the chunks joined line by line are the file's
    lines with their numbers (document_lines.py)."""
    if not document.sentences:
        return [spans[0].start for spans in chunks]
    text = document.text
    begins = [0]
    for previous, spans in zip(chunks, chunks[1:]):
        line_end = text.find("\n", previous[-1].end, spans[0].start)  # none where a long line was cut mid-line
        begins.append(line_end + 1 if line_end >= 0 else spans[0].start)
    return begins


def queue_document(
    batch: RowBatch,
    document: Document,
    digest: str,
    chunks: Sequence[Sequence[Span]],
    known: Mapping[int, np.ndarray] | None = None,
) -> Iterator[None]:
    """Queue a document's rows chunk by chunk, yielding after each so that a long document is
    written in several batches; its documents row comes with its last chunk. `known`: vectors by
    embedding key (context.embedding_key), those of the document's version in the index: a
    sentence embedded as the same text keeps its vector."""
    known = known or {}
    key = doc_key(document.doc_id)
    metadata = json.dumps(document.metadata, ensure_ascii=False, sort_keys=True) if document.metadata else ""
    begins = chunk_begins(document, chunks)
    texts = [document.text[begin : spans[-1].end] for begin, spans in zip(begins, chunks)]
    for part, (spans, text, terms) in enumerate(zip(chunks, texts, chunk_context_terms(texts))):
        begin = begins[part]
        cid = chunk_id(key, part)
        path = chunk_section(document, spans)
        pages = page_range(document.pages, spans[0].start, spans[-1].end)
        batch.chunks.append(
            {
                ChunkColumn.ID: cid,
                ChunkColumn.DOC_KEY: key,
                ChunkColumn.DOC_ID: document.doc_id,
                ChunkColumn.DOC_HASH: digest,
                ChunkColumn.TITLE: document.title,
                ChunkColumn.SOURCE: document.source,
                ChunkColumn.PART: part,
                ChunkColumn.PARTS: len(chunks),
                ChunkColumn.TEXT: text,
                ChunkColumn.TOKENS: sum(span.tokens for span in spans),
                ChunkColumn.SENTENCE_STARTS: [span.start - begin for span in spans],
                ChunkColumn.SENTENCE_ENDS: [span.end - begin for span in spans],
                ChunkColumn.METADATA: metadata,
                ChunkColumn.HEADING_PATH: list(path),
                ChunkColumn.FIRST_PAGE: pages[0] if pages else None,
                ChunkColumn.LAST_PAGE: pages[1] if pages else None,
                ChunkColumn.FILE_TYPE: document.file_type,
            }
        )
        sentences = [document.text[span.start : span.end] for span in spans]
        for position, (span, sentence) in enumerate(zip(spans, sentences)):
            section = heading_path(document.headings, span.start)
            embedded_as = embedding_text(document.title, section, terms, with_neighbours(sentences, position))
            vector_key = embedding_key(embedded_as)
            batch.sentences.append(
                {
                    SentenceColumn.CHUNK_ID: cid,
                    SentenceColumn.DOC_KEY: key,
                    SentenceColumn.POSITION: position,
                    SentenceColumn.TEXT: sentence,
                    SentenceColumn.START: span.start - begin,
                    SentenceColumn.END: span.end - begin,
                    SentenceColumn.EMBED_KEY: vector_key,
                }
            )
            batch.embed_texts.append(embedded_as)
            batch.known_vectors.append(known.get(vector_key))
        if part == len(chunks) - 1:
            batch.documents.append(
                {
                    DocumentColumn.ID: document.doc_id,
                    DocumentColumn.DOC_KEY: key,
                    DocumentColumn.DOC_HASH: digest,
                    DocumentColumn.TITLE: document.title,
                    DocumentColumn.SOURCE: document.source,
                    DocumentColumn.PATH: document.path,
                    DocumentColumn.CHUNKS: len(chunks),
                    DocumentColumn.SENTENCES: sum(len(spans) for spans in chunks),
                    DocumentColumn.INDEXED_AT: datetime.now(timezone.utc).isoformat(timespec="seconds"),
                }
            )
        yield


def embedded_rows(
    embedder: Embedder,
    batch: RowBatch,
    batch_size: int,
    on_embedded: Callable[[int, int], None] | None = None,
) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The batch's chunk, sentence (with their vectors) and documents rows. The sentences whose
    vectors are not known are embedded longest first over the whole batch (a model batch pads to
    its longest text, so sorting each slice alone pads more), EMBED_SLICE_BATCHES model batches at
    a time, `on_embedded(embedded, waiting)` told after each, so progress moves during a large write."""
    from arag_mcp.indexer.index.writer import sentence_rows_of  # LanceDB: only where rows are written

    vectors = np.zeros((len(batch.embed_texts), embedder.dimension), dtype=np.float32)
    missing = []
    for at, vector in enumerate(batch.known_vectors):
        if vector is None:
            missing.append(at)
        else:
            vectors[at] = vector
    order = sorted(missing, key=lambda at: -len(batch.embed_texts[at]))
    step = batch_size * EMBED_SLICE_BATCHES
    if not order and on_embedded is not None:
        on_embedded(0, 0)
    for first in range(0, len(order), step):
        rows = order[first : first + step]
        vectors[rows] = embedder.encode_documents([batch.embed_texts[at] for at in rows], batch_size=batch_size)
        if on_embedded is not None:
            on_embedded(len(rows), max(0, len(order) - first - step))
    return (
        pa.Table.from_pylist(batch.chunks, schema=chunks_schema()),
        sentence_rows_of(batch.sentences, vectors),
        pa.Table.from_pylist(batch.documents, schema=documents_schema()),
    )


def sentence_limit(embedder: Embedder, chunk_tokens: int) -> int:
    """Longest sentence kept whole: fits a chunk and (with its context) the model's window."""
    return max(16, min(chunk_tokens, embedder.max_tokens - 32))
