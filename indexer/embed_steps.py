"""The embedding stage of a build, here: read each file to read once, chunk and embed its new and
changed documents, write in batches and commit in steps.

A batch is written every `flush_sentences` sentences (fewer where the model is slow, so that a
write takes about half of `commit_seconds`), and a commit lands every `commit_sentences` (between
two documents) or `commit_seconds` (when the time comes, the batch in hand written first: between
two chunks, inside a long document), whichever comes first. The Ray build's embedding stage is
ray_build.embed_changes.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arag_mcp.indexer.index.file_states import FileState
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.manifest import Manifest
from arag_mcp.indexer.sources.budget import BudgetedReader
from arag_mcp.indexer.sources.document import Document, SkippedFile

from .build_model import stamped
from .build_options import BuildOptions
from .build_summary import BuildSummary
from .changes import Changes, FileToRead
from .progress import BuildProgress
from .rows import RowBatch, chunk_document, content_hash, embedded_rows, queue_document

if TYPE_CHECKING:  # LanceDB is imported only where a command writes
    from arag_mcp.indexer.embedding.embedder import Embedder
    from arag_mcp.indexer.index.stored_documents import StoredDocument
    from arag_mcp.indexer.index.writer import IndexWriter

log = logging.getLogger("arag_mcp.indexer.build")

FIRST_BATCH_SENTENCES = 256
"""The first write batch's sentences to embed, which measures the model's rate (`batch_limit`)."""
MIN_BATCH_SENTENCES = 64
"""The fewest sentences a write batch embeds, however slow the model: each batch is a table write."""


@dataclass
class ReadDocuments:
    """What the embedding stage read."""

    seen: dict[str, str] = field(default_factory=dict)
    """doc_id → content hash of every document read."""
    moved: set[str] = field(default_factory=set)
    """Ids whose rows went to a renamed file's documents."""


class DocumentIds:
    """Document ids read so far: a second document with an id, or with another id of the same key, is skipped."""

    def __init__(self, unchanged: Mapping[str, FileState] = {}) -> None:
        self.keys: dict[str, str] = {}
        for state in unchanged.values():
            for doc_id in state.documents:
                self.keys.setdefault(doc_key(doc_id), doc_id)

    def clash(self, document: Document) -> str:
        """Why the document is skipped ("" where it is not); records its id otherwise."""
        known = self.keys.get(doc_key(document.doc_id))
        if known is None:
            self.keys[doc_key(document.doc_id)] = document.doc_id
            return ""
        other = "appears twice" if known == document.doc_id else "has the same key as another id"
        return f"document id {document.doc_id!r} {other}; the first is kept"


@dataclass
class EmbeddingWork:
    """What an embedding stage works with: the files' reader, the index's writer, the documents the
    index holds, and the source files' states, which it completes with each file read whole."""

    reader: BudgetedReader
    writer: IndexWriter
    options: BuildOptions
    summary: BuildSummary
    existing: Mapping[str, StoredDocument]
    files: dict[str, FileState]
    started: float = field(default_factory=time.perf_counter)

    def record_file(self, item: FileToRead, documents: dict[str, str], skips: Sequence[SkippedFile]) -> None:
        """Record the file as read, with the reasons of its skips; a file skipped for a budget is left
        unrecorded, so that the next sync reads it again (under the limits it is given)."""
        mine = [skip for skip in skips if skip.file == item.file]
        if item.sha256 and not any(skip.retry for skip in mine):
            reasons = tuple(skip.reason for skip in mine)
            self.files[item.file] = FileState(item.size, item.mtime_ns, item.sha256, documents, reasons)


class LocalEmbedding:
    """The embedding stage on this machine, with `embedder`; its timed commits record `record`."""

    def __init__(self, work: EmbeddingWork, embedder: Embedder, record: Manifest) -> None:
        self.work, self.embedder, self.record = work, embedder, record
        self.batch = RowBatch()
        self.read = ReadDocuments()
        self.since_commit, self.last_commit = 0, time.monotonic()
        self.progress: BuildProgress | None = None

    def run(self, changes: Changes, moves: Mapping[str, FileState]) -> ReadDocuments:
        """Embed the new and changed documents of `changes.read`; `moves`: file read → the recorded
        state of a file gone with the same content (its documents' rows move rather than embed)."""
        ids = DocumentIds(changes.unchanged)
        self.progress = BuildProgress(sum(item.size for item in changes.read), self.work.options.progress)
        try:
            for item in changes.read:
                self._read_file(item, ids, list(moves[item.file].documents) if item.file in moves else [])
            self._flush()
        finally:
            self.progress.close()
        return self.read

    def _read_file(self, item: FileToRead, ids: DocumentIds, renamed_from: list[str]) -> None:
        summary = self.work.summary
        skips_before = len(summary.skipped)
        documents: dict[str, str] = {}
        for place, document in enumerate(self.work.reader.read(item.path, item.source, summary.skipped)):
            self.progress.document_read()
            clash = ids.clash(document)
            if clash:
                summary.skipped.append(SkippedFile(document.source, clash, ""))
                continue
            digest = self.read.seen[document.doc_id] = documents[document.doc_id] = content_hash(document)
            self._document(document, digest, renamed_from[place] if place < len(renamed_from) else None)
        self.progress.file_read(item.size)
        self.work.record_file(item, documents, summary.skipped[skips_before:])
        summary.show_skips()

    def _document(self, document: Document, digest: str, old_id: str | None) -> None:
        """Queue a new or changed document's rows (a renamed one's move instead), writing and
        committing as they come due."""
        existing, summary, writer = self.work.existing, self.work.summary, self.work.writer
        stored = existing.get(document.doc_id)
        if stored is not None and stored.doc_hash == digest and not stored.problem:
            return
        if old_id in existing and not existing[old_id].problem:
            if writer.move_document(old_id, document.doc_id, digest, document.title, document.source, document.path):
                self.read.moved.add(old_id)
                summary.updated += 1
                return
        if document.doc_id in existing:
            summary.updated += 1
            self.batch.stale.append(document.doc_id)
        else:
            summary.added += 1
        earlier = [doc_id for doc_id in (document.doc_id, old_id) if doc_id in existing]
        known = writer.sentence_vectors(earlier) if earlier else None
        chunks = chunk_document(document, self.embedder, self.work.options.chunk_tokens)
        options = self.work.options
        for _ in queue_document(self.batch, document, digest, chunks, known):
            due = self._commit_due()
            if (
                due
                or len(self.batch.sentences) >= options.flush_sentences
                or self.batch.to_embed >= batch_limit(options, self.work.summary)
            ):
                self.since_commit += self._flush()
            if due:  # the document so far: a long one is committed in parts
                self._commit_step(document.doc_id)
        if self.since_commit + self.batch.to_embed >= options.commit_sentences or self._commit_due():
            self._flush()
            self._commit_step()

    def _commit_due(self) -> bool:
        return time.monotonic() - self.last_commit >= self.work.options.commit_seconds

    def _commit_step(self, in_progress: str | None = None) -> None:
        """A timed commit: the whole documents written, and `in_progress`'s chunks written so far (a
        document that alone outlasts --commit-seconds; the next command completes it, reusing their
        vectors, if this one is stopped)."""
        started = time.perf_counter()
        committed = self.work.writer.commit_step(stamped(self.record, self.work.started), self.work.files, in_progress)
        log.debug("committed %d sentences in %.2f s", committed.counts.sentences, time.perf_counter() - started)
        self.since_commit, self.last_commit = 0, time.monotonic()

    def _flush(self) -> int:
        """Drop the old rows of changed documents, embed the batch (but the sentences whose vectors are
        known), append it and empty it; returns the sentences embedded."""
        batch, writer, summary = self.batch, self.work.writer, self.work.summary
        writer.delete_documents(batch.stale)
        batch.stale = []
        if not batch.sentences and not batch.documents:
            return 0
        embedded = batch.to_embed
        started = time.perf_counter()
        rows = embedded_rows(self.embedder, batch, self.work.options.batch_size, self.progress.embedded)
        summary.embedding_seconds += time.perf_counter() - started
        writer.add(*rows)
        batch.clear()
        summary.embedded_sentences += embedded
        return embedded


def batch_limit(options: BuildOptions, summary: BuildSummary) -> int:
    """Sentences to embed per write batch: `flush_sentences`, or fewer where the model is slow, so
    that a batch takes about half of `commit_seconds` and commits land on time (a commit waits for
    the batch in hand); before the model's rate is known, FIRST_BATCH_SENTENCES."""
    if math.isinf(options.commit_seconds):  # no commit is due before the end (a rebuild's)
        return options.flush_sentences
    if not summary.embedded_sentences:
        return min(options.flush_sentences, FIRST_BATCH_SENTENCES)
    timely = int(summary.sentences_per_second * options.commit_seconds / 2)
    return min(options.flush_sentences, max(MIN_BATCH_SENTENCES, timely))
