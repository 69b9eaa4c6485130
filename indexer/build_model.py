"""The model a build embeds with, and what the manifest records of how it embeds.

An index is only extended the way its vectors were made: with its model, chunk size, backend and
format, and with the encoder it carries rather than a new export of its model (int8 and fp32
vectors differ slightly, and so can two exports).
"""

from __future__ import annotations

import functools
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from arag_mcp.indexer.embedding.embedder import Embedder
from arag_mcp.indexer.index.encoder_files import encoder_folder, store_encoder
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.manifest import EncoderFiles, Manifest, RecordedSource
from arag_mcp.indexer.text.context import SENTENCE_CONTEXT
from arag_mcp.indexer.text.sentences import SPLITTER_VERSION

from .build_options import BuildOptions
from .rows import sentence_limit


def check_compatible(previous: Manifest | None, options: BuildOptions) -> None:
    """An index is only extended with the model and chunking it was built with."""
    if previous is None or options.rebuild:
        return
    if previous.model != options.model:
        raise IndexStoreError(
            f"index was built with model {previous.model!r}; pass --model {previous.model} "
            "to extend it, or --rebuild to re-embed everything with the new model"
        )
    if previous.chunk_tokens != options.chunk_tokens:
        raise IndexStoreError(
            f"index was built with --chunk-tokens {previous.chunk_tokens}; pass the same value "
            "or --rebuild to re-chunk everything"
        )
    if previous.splitter != SPLITTER_VERSION or previous.sentence_context != SENTENCE_CONTEXT:
        raise IndexStoreError("index was built by another arag-index version; pass --rebuild to rebuild it")


def check_backend(previous: Manifest | None, options: BuildOptions, backend: str) -> None:
    """New vectors are made the way the index's vectors were (int8 and fp32 vectors differ slightly)."""
    if previous is None or options.rebuild or previous.embedding_backend == backend:
        return
    used = previous.embedding_backend
    raise IndexStoreError(
        f"index was embedded with --backend {used}, this build would use {backend}; "
        f"pass --backend {used} to extend it, or --rebuild to re-embed everything"
    )


def carried_encoder(previous: Manifest | None, options: BuildOptions) -> EncoderFiles | None:
    """The encoder the index carries, where this build makes vectors the way the index's were made:
    an index is extended with its own encoder, never with a new export of its model."""
    if previous is None or options.rebuild or previous.embedding_backend != options.backend:
        return None
    if (options.device or "cpu") != "cpu":
        return None
    return previous.encoder


def build_embedder(uri: str, previous: Manifest | None, options: BuildOptions) -> Embedder:
    """The model a build embeds with: the encoder the index carries where it has one."""
    carried = carried_encoder(previous, options)
    folder = encoder_folder(uri, carried) if carried else None
    return _embedder(options.model, options.device, options.backend, folder)


@functools.lru_cache(maxsize=1)
def _embedder(model: str, device: str | None, backend: str, encoder: Path | None) -> Embedder:
    """The model loaded once per process: a watcher's batches, one after another, share it."""
    return Embedder(model, device, backend, encoder).load()


def stamped(record: Manifest, started: float) -> Manifest:
    """`record` with the time of its commit and the seconds the command has run (since `started`)."""
    return replace(
        record,
        built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        build_seconds=round(time.perf_counter() - started, 3),
    )


def build_record(
    uri: str,
    previous: Manifest | None,
    embedder: Embedder,
    options: BuildOptions,
    sources: list[RecordedSource],
    readers: int | None,
) -> Manifest:
    """What a build records beside its tables (the writer's commit adds the tally, the tables and the
    keyword segments). The encoder the index carries stays as recorded (its files were checked
    against it); a new one is put into the index here, before a commit names it."""
    carried = carried_encoder(previous, options)
    encoder = carried or (store_encoder(uri, embedder.encoder_folder) if embedder.encoder_folder else None)
    embedding = {
        "model": options.model,
        "embedding_backend": embedder.backend,
        "dimension": embedder.dimension,
        "query_prompt": embedder.prompt("query"),
        "document_prompt": embedder.prompt("document"),
        "chunk_tokens": options.chunk_tokens,
        "sentence_tokens": sentence_limit(embedder, options.chunk_tokens),
        "splitter": SPLITTER_VERSION,
        "sentence_context": SENTENCE_CONTEXT,
    }
    described_as = previous.described_as if previous else ""
    return Manifest.record(
        uri, embedding=embedding, encoder=encoder, sources=tuple(sources), described_as=described_as, readers=readers
    )
