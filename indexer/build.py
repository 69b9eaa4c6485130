"""Build or update an index: read documents, chunk, embed new sentences, commit."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
from tqdm import tqdm

from .chunking import Span, pack_chunks, sentence_spans
from .context import SENTENCE_CONTEXT, chunk_context_terms, embedding_text
from .embedding import DEFAULT_BACKEND, DEFAULT_MODEL, Embedder
from .ids import chunk_id, doc_key
from .manifest import FORMAT_VERSION, IndexStoreError, is_remote, normalise_uri, read_manifest
from .readers import CorpusError, Document, SkippedFile, iter_documents
from .schema import chunks_schema, sentences_schema
from .sentences import SPLITTER_VERSION
from .store import IndexWriter, build_lock

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildOptions:
    model: str = DEFAULT_MODEL
    device: str | None = None
    backend: str = DEFAULT_BACKEND
    batch_size: int = 32
    chunk_tokens: int = 1000
    rebuild: bool = False
    flush_sentences: int = 4096
    progress: bool = True


@dataclass
class BuildSummary:
    documents: int = 0
    chunks: int = 0
    sentences: int = 0
    embedded_documents: int = 0
    embedded_sentences: int = 0
    unchanged_documents: int = 0
    deleted_documents: int = 0
    seconds: float = 0.0
    skipped: list[SkippedFile] = field(default_factory=list)

    @property
    def sentences_per_second(self) -> float:
        return self.embedded_sentences / self.seconds if self.seconds else 0.0


def content_hash(document: Document) -> str:
    payload = json.dumps([document.title, document.source, document.text, document.metadata], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def check_compatible(previous: dict | None, options: BuildOptions, embedder_model: str) -> None:
    """An index is only extended with the model and chunking it was built with."""
    if previous is None or options.rebuild:
        return
    if previous["model"] != embedder_model:
        raise IndexStoreError(
            f"index was built with model {previous['model']!r}; pass --model {previous['model']} "
            "to extend it, or --rebuild to re-embed everything with the new model"
        )
    if previous["chunk_tokens"] != options.chunk_tokens:
        raise IndexStoreError(
            f"index was built with --chunk-tokens {previous['chunk_tokens']}; pass the same value "
            "or --rebuild to re-chunk everything"
        )
    if (
        previous.get("format_version") != FORMAT_VERSION
        or previous["splitter"] != SPLITTER_VERSION
        or previous.get("sentence_context") != SENTENCE_CONTEXT
    ):
        raise IndexStoreError("index was built by another arag-index version; pass --rebuild to rebuild it")


def check_backend(previous: dict | None, options: BuildOptions, backend: str) -> None:
    """New vectors are made the way the index's vectors were (int8 and fp32 vectors differ slightly)."""
    if previous is None or options.rebuild or previous["embedding_backend"] == backend:
        return
    used = previous["embedding_backend"]
    raise IndexStoreError(
        f"index was embedded with --backend {used}, this build would use {backend}; "
        f"pass --backend {used} to extend it, or --rebuild to re-embed everything"
    )


class _Batch:
    """Rows of newly chunked documents waiting to be embedded and written."""

    def __init__(self) -> None:
        self.chunks: list[dict] = []
        self.sentences: list[dict] = []
        self.embed_texts: list[str] = []

    def add_document(self, document: Document, digest: str, chunks: Sequence[Sequence[Span]]) -> None:
        key = doc_key(document.doc_id)
        metadata = json.dumps(document.metadata, ensure_ascii=False, sort_keys=True) if document.metadata else ""
        texts = [document.text[spans[0].start : spans[-1].end] for spans in chunks]
        for ordinal, (spans, text, terms) in enumerate(zip(chunks, texts, chunk_context_terms(texts))):
            begin = spans[0].start
            cid = chunk_id(key, ordinal)
            self.chunks.append(
                {
                    "chunk_id": cid,
                    "doc_key": key,
                    "doc_id": document.doc_id,
                    "doc_hash": digest,
                    "title": document.title,
                    "source": document.source,
                    "ordinal": ordinal,
                    "doc_chunks": len(chunks),
                    "text": text,
                    "tokens": sum(span.tokens for span in spans),
                    "sentence_starts": [span.start - begin for span in spans],
                    "sentence_ends": [span.end - begin for span in spans],
                    "metadata": metadata,
                }
            )
            for number, span in enumerate(spans):
                sentence = document.text[span.start : span.end]
                self.sentences.append(
                    {
                        "chunk_id": cid,
                        "doc_key": key,
                        "ordinal": number,
                        "text": sentence,
                        "start": span.start - begin,
                        "end": span.end - begin,
                    }
                )
                self.embed_texts.append(embedding_text(document.title, terms, sentence))


def build_index(sources: Sequence[str | Path], uri: str, options: BuildOptions = BuildOptions()) -> BuildSummary:
    """Index `sources` into `uri`, embedding only documents that are new or changed."""
    uri = normalise_uri(uri)
    started = time.perf_counter()
    summary = BuildSummary()
    with build_lock(uri):
        previous = read_manifest(uri)
        check_compatible(previous, options, options.model)
        embedder = Embedder(options.model, options.device, options.backend).load()
        check_backend(previous, options, embedder.backend)
        writer = IndexWriter(uri, embedder.dimension, rebuild=options.rebuild)
        existing = writer.existing_documents()
        inside_sources = [] if is_remote(uri) else [Path(uri)]  # an index kept beside its documents
        documents = iter_documents(sources, summary.skipped, exclude=inside_sources)
        seen = _update(writer, embedder, documents, existing, options, summary)
        removed = [doc_id for doc_id in existing if doc_id not in seen]
        writer.delete_documents(removed)
        summary.deleted_documents = len(removed)
        vector_index = writer.finish_tables()
        summary.chunks = writer.chunks.count_rows()
        summary.sentences = writer.sentences.count_rows()
        summary.documents = len(seen)
        summary.seconds = time.perf_counter() - started
        writer.commit(
            {
                "model": options.model,
                "dimension": embedder.dimension,
                "embedding_backend": embedder.backend,
                "query_prompt": embedder.prompt("query"),
                "document_prompt": embedder.prompt("document"),
                "chunk_tokens": options.chunk_tokens,
                "sentence_tokens": _sentence_limit(embedder, options),
                "splitter": SPLITTER_VERSION,
                "sentence_context": SENTENCE_CONTEXT,
                "counts": {"documents": summary.documents, "chunks": summary.chunks, "sentences": summary.sentences},
                "vector_index": vector_index,
                "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "build_seconds": round(summary.seconds, 3),
            }
        )
    return summary


def _sentence_limit(embedder: Embedder, options: BuildOptions) -> int:
    """Longest sentence kept whole: fits a chunk and (with its context) the model's window."""
    return max(16, min(options.chunk_tokens, embedder.max_tokens - 32))


def _update(
    writer: IndexWriter,
    embedder: Embedder,
    documents: Iterable[Document],
    existing: dict[str, str],
    options: BuildOptions,
    summary: BuildSummary,
) -> set[str]:
    """Chunk and embed the new or changed documents; return the ids of all documents seen."""
    seen: dict[str, str] = {}
    keys: dict[str, str] = {}
    stale: list[str] = []
    batch = _Batch()
    limit = _sentence_limit(embedder, options)
    progress = tqdm(desc="documents", unit="doc", disable=not options.progress, dynamic_ncols=True)
    for document in documents:
        progress.update()
        _check_identity(document, seen, keys)
        digest = content_hash(document)
        seen[document.doc_id] = digest
        if existing.get(document.doc_id) == digest:
            summary.unchanged_documents += 1
            continue
        if document.doc_id in existing:
            stale.append(document.doc_id)
        spans = sentence_spans(document.text, embedder.count_tokens, embedder.token_offsets, limit)
        if not spans:
            continue
        batch.add_document(document, digest, pack_chunks(spans, options.chunk_tokens))
        summary.embedded_documents += 1
        if len(batch.sentences) >= options.flush_sentences:
            _flush(writer, embedder, batch, stale, options, summary, progress)
            batch, stale = _Batch(), []
    _flush(writer, embedder, batch, stale, options, summary, progress)
    progress.close()
    return set(seen)


def _check_identity(document: Document, seen: dict[str, str], keys: dict[str, str]) -> None:
    if document.doc_id in seen:
        raise CorpusError(
            f"{document.source}: document id {document.doc_id!r} appears twice; give each record a unique id"
        )
    key = doc_key(document.doc_id)
    if key in keys:
        raise CorpusError(
            f"{document.source}: document ids {keys[key]!r} and {document.doc_id!r} hash to the same key; rename one"
        )
    keys[key] = document.doc_id


def _flush(
    writer: IndexWriter,
    embedder: Embedder,
    batch: _Batch,
    stale: list[str],
    options: BuildOptions,
    summary: BuildSummary,
    progress: tqdm,
) -> None:
    """Drop the old rows of changed documents, embed the batch, and append it."""
    writer.delete_documents(stale)
    if not batch.sentences:
        return
    vectors = embedder.encode_documents(batch.embed_texts, batch_size=options.batch_size)
    schema = sentences_schema(embedder.dimension)
    vector_field = schema.field("vector")
    sentence_table = pa.Table.from_pylist(batch.sentences, schema=schema.remove(schema.get_field_index("vector")))
    vector_column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), embedder.dimension)
    sentence_table = sentence_table.append_column(vector_field, vector_column)
    writer.add(pa.Table.from_pylist(batch.chunks, schema=chunks_schema()), sentence_table)
    summary.embedded_sentences += len(batch.sentences)
    progress.set_postfix(sentences=summary.embedded_sentences, refresh=False)
