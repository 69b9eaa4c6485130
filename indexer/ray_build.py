"""Chunk and embed a build's new and changed documents on a Ray cluster; the driver commits them.

The driver plans the build as a local one does (build.py: which documents are new or changed).
Ray Data then reads their files (tasks) and, in a pool of actors that each load the model once,
splits, chunks and embeds them and writes their rows as Lance fragments of the index's tables
(index/fragments.py). Workers write data files only: the driver appends all the fragments, checks
that every document is whole, and the manifest names the new table versions in one commit. A
killed worker's fragments are never appended (Ray runs its batch again); a killed driver leaves
the manifest, and the index it names, as they were. Workers read the files at the paths the
driver planned, so a cluster's nodes must see the sources where the driver does.
"""

from __future__ import annotations

import json
import logging
import pickle
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import ray
import ray.data
from tqdm import tqdm

from .build_summary import BuildFailed
from .changes import FileToRead
from .command_options import LOCAL_RAY
from .embed_steps import DocumentIds, EmbeddingWork, ReadDocuments
from .embedding.embedder import Embedder
from .index.fragments import write
from .index.schema import CHUNKS, DOCUMENTS, TABLES, ChunkColumn, DocumentColumn, chunks_schema, documents_schema
from .index.writer import table_rows, table_uri
from .rows import RowBatch, chunk_document, content_hash, embedded_rows, queue_document
from .sources.document import SkippedFile
from .sources.files import Source, iter_documents
from .text.sentences import split_sentences

WRITTEN_CHUNK_COLUMNS = [
    ChunkColumn.ID,
    ChunkColumn.DOC_ID,
    ChunkColumn.PART,
    ChunkColumn.PARTS,
    ChunkColumn.SOURCE,
    ChunkColumn.FILE_TYPE,
]
WRITTEN_DOCUMENT_COLUMNS = [DocumentColumn.ID, DocumentColumn.CHUNKS]
"""The columns of the rows written that the commit checks (completeness.py) and counts (tally.py)."""
READ_BLOCKS_PER_WORKER = 4
"""Files are read in this many tasks per worker, at most as many at a time as there are workers:
reading takes little CPU beside embedding (so its tasks reserve none), and each task is a process
that imports the indexer."""
READ_SHARE_MIN = 64
"""Documents a read task reads at least: each is a process that reads its file once."""
DOCUMENTS_PER_CALL = 256
"""Documents an actor chunks and embeds per call at most (fewer when the read shares are smaller):
what Ray retries when a worker dies. A call's sentences are embedded together, longest first in
batches, so a larger call pads less: on one thread, MuSiQue's sentences embed at 61/s in calls of
220 sentences, 73/s in calls of 880 and 80/s in calls of 2,192."""
FORK_WARNINGS = r"lance(db)? (is not fork-safe|fork support is experimental)"
"""What Lance and LanceDB warn of before a process forks. Ray starts its processes with fork and
exec at once, so nothing of theirs runs in the child."""


class RayBuildError(Exception):
    """Ray could not be reached, or the build failed on it; the one-line message says which."""


@dataclass(frozen=True)
class WorkerSettings:
    """What a worker needs to turn documents into rows, as the build's options give it."""

    model: str
    device: str | None
    backend: str
    batch_size: int
    chunk_tokens: int
    flush_sentences: int

    @property
    def gpu(self) -> bool:
        return bool(self.device and self.device.startswith("cuda"))


@dataclass
class Written:
    """What workers wrote: each table's fragments (uncommitted), the chunk and documents rows they
    hold (the commit checks them whole) and how many sentences they embedded. A worker gathers its
    writes in one, the driver gathers the workers'."""

    fragments: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name in TABLES})
    chunk_rows: pa.Table = field(default_factory=lambda: chunks_schema().empty_table().select(WRITTEN_CHUNK_COLUMNS))
    document_rows: pa.Table = field(
        default_factory=lambda: documents_schema().empty_table().select(WRITTEN_DOCUMENT_COLUMNS)
    )
    sentences: int = 0

    def add(self, other: Written) -> None:
        for name, listed in other.fragments.items():
            self.fragments[name].extend(listed)
        self.chunk_rows = pa.concat_tables([self.chunk_rows, other.chunk_rows])
        self.document_rows = pa.concat_tables([self.document_rows, other.document_rows])
        self.sentences += other.sentences


def embed_on_ray(
    address: str,
    uri: str,
    files: dict[str, tuple[Source, dict[str, str]]],
    inside: Sequence[Path],
    worker: WorkerSettings,
    progress: tqdm,
) -> Written:
    """Read `files` (path → the source it is read as part of, and its documents to embed with their
    hashes), chunk, embed and write their documents on the Ray cluster at `address`."""
    written = Written()
    with _cluster(address):
        try:
            for row in _pipeline(uri, files, inside, worker).iter_rows():
                part: Written = pickle.loads(row["written"])
                written.add(part)
                progress.update(part.sentences)
        except ray.exceptions.RayError as exc:
            raise RayBuildError(
                f"the build failed on Ray ({_first_line(exc)}); the index keeps its last commit"
            ) from None
    return written


@contextmanager
def _cluster(address: str | None) -> Iterator[None]:
    """Join the cluster at `address` (or start a local Ray) unless this process already did; leave it after."""
    if ray.is_initialized():
        yield
        return
    level = _ray_log_level()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=FORK_WARNINGS)
            ray.init(
                address=address or LOCAL_RAY,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=level,
            )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise RayBuildError(f"cannot start or reach Ray at {address!r} ({_first_line(exc)}); check --ray") from None
    for handler in logging.getLogger("ray.data").handlers:
        if isinstance(handler, logging.StreamHandler):  # its terminal; its log file in the session keeps all
            handler.setLevel(level)
    try:
        yield
    finally:
        ray.shutdown()


def _ray_log_level() -> int:
    """What of Ray's own messages the build's stderr shows: its errors, and its notices too when the
    build logs at DEBUG. The build reports progress and failures itself; Ray's start-up notices,
    plans and warnings (a one-document add "only received 1 input") would bury them."""
    return logging.INFO if logging.getLogger().isEnabledFor(logging.DEBUG) else logging.ERROR


def _pipeline(
    uri: str, files: dict[str, tuple[Source, dict[str, str]]], inside: Sequence[Path], worker: WorkerSettings
) -> ray.data.Dataset:
    """Read the files in tasks, then chunk, embed and write their documents in a pool of actors,
    one per CPU (or GPU, for --device cuda) of the cluster."""
    ray.data.DataContext.get_current().enable_progress_bars = False
    workers = max(1, int(ray.cluster_resources().get("GPU" if worker.gpu else "CPU", 1)))
    blocks = READ_BLOCKS_PER_WORKER * workers
    share = _share(files, blocks)
    items = _read_items(files, inside, share)
    return (
        ray.data.from_items(items, override_num_blocks=min(len(items), blocks))
        .flat_map(_read_file, compute=ray.data.TaskPoolStrategy(size=workers), num_cpus=0)
        .map_batches(
            _ChunkEmbedWrite,
            fn_constructor_kwargs={"uri": uri, "worker": worker},
            batch_size=min(DOCUMENTS_PER_CALL, share),
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=0 if worker.gpu else 1,
            num_gpus=1 if worker.gpu else 0,
        )
    )


def _read_items(
    files: dict[str, tuple[Source, dict[str, str]]], inside: Sequence[Path], share: int
) -> list[dict[str, Any]]:
    """What the read tasks read: each file, or each `share` of the documents of a file that holds
    more (a JSONL corpus). A read task's documents leave it as one block, and a block goes to one
    actor, so a corpus in a single file is cut into shares (`_share`) for every worker to get some;
    each share reads its file once."""
    items = []
    for source, todo in files.values():
        read = pickle.dumps((source, list(inside)))
        doc_ids = list(todo)
        for first in range(0, len(doc_ids), share):
            part = {doc_id: todo[doc_id] for doc_id in doc_ids[first : first + share]}
            items.append({"source": read, "todo": json.dumps(part)})
    return items


def _share(files: dict[str, tuple[Source, dict[str, str]]], blocks: int) -> int:
    """Documents per read task: the planned documents spread over about `blocks` tasks."""
    total = sum(len(todo) for _, todo in files.values())
    return max(READ_SHARE_MIN, -(-total // blocks))


def _read_file(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The planned documents of one file, each with the hash the plan gave it."""
    source, inside = pickle.loads(item["source"])
    todo = json.loads(item["todo"])
    return [
        {"document": pickle.dumps(document), "digest": todo[document.doc_id]}
        for document in iter_documents([source], [], exclude=inside)
        if document.doc_id in todo
    ]


class _ChunkEmbedWrite:
    """A worker: loads the model once, then chunks, embeds and writes batches of documents."""

    def __init__(self, uri: str, worker: WorkerSettings) -> None:
        self.uri = uri
        self.worker = worker
        self.embedder = Embedder(worker.model, worker.device, worker.backend).load()

    def __call__(self, documents: dict[str, Any]) -> pa.Table:
        """Fragments of the documents' rows, the rows' ids (checked whole before the commit) and the sentence count."""
        written = Written()
        batch = RowBatch()
        for raw, digest in zip(documents["document"], documents["digest"]):
            document = pickle.loads(raw)
            chunks = chunk_document(document, self.embedder, self.worker.chunk_tokens)
            for _ in queue_document(batch, document, digest, chunks):
                if len(batch.sentences) >= self.worker.flush_sentences:
                    self._write(batch, written)
        self._write(batch, written)
        return pa.table({"written": pa.array([pickle.dumps(written)], pa.binary())})

    def _write(self, batch: RowBatch, written: Written) -> None:
        if not batch.sentences and not batch.documents:
            return
        sentences = len(batch.sentences)
        written.add(write_rows(self.uri, *embedded_rows(self.embedder, batch, self.worker.batch_size), sentences))
        batch.clear()


def write_rows(
    uri: str, chunk_rows: pa.Table, sentence_rows: pa.Table, document_rows: pa.Table, sentences: int
) -> Written:
    """Write whole chunks' rows as fragments of the index's tables (uncommitted), with the ids of the
    chunk and documents rows, which the commit checks."""
    rows = table_rows(chunk_rows, sentence_rows, document_rows)
    return Written(
        {name: write(table_uri(uri, name), table) for name, table in rows.items()},
        rows.get(CHUNKS, chunks_schema().empty_table()).select(WRITTEN_CHUNK_COLUMNS),
        rows.get(DOCUMENTS, documents_schema().empty_table()).select(WRITTEN_DOCUMENT_COLUMNS),
        sentences,
    )


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def embed_changes(work: EmbeddingWork, to_read: Sequence[FileToRead], inside: Sequence[Path]) -> ReadDocuments:
    """Chunk, embed and write the new and changed documents on Ray (ray_build.py), then append what
    the workers wrote; the build's one commit lands it. The files are read here once to tell which
    documents are new or changed, and again by the workers."""
    reader, writer, options, summary, existing = work.reader, work.writer, work.options, work.summary, work.existing
    read = ReadDocuments()
    ids = DocumentIds()
    todo: dict[str, tuple[Source, dict[str, str]]] = {}
    estimated = 0
    for item in to_read:
        skips_before = len(summary.skipped)
        documents: dict[str, str] = {}
        for document in reader.read(item.path, item.source, summary.skipped):
            clash = ids.clash(document)
            if clash:
                summary.skipped.append(SkippedFile(document.source, clash, ""))
                continue
            digest = read.seen[document.doc_id] = documents[document.doc_id] = content_hash(document)
            stored = existing.get(document.doc_id)
            if stored is None or stored.doc_hash != digest or stored.problem:
                todo.setdefault(item.file, (replace(item.source, path=item.path), {}))[1][document.doc_id] = digest
                estimated += len(split_sentences(document.text))
        work.record_file(item, documents, summary.skipped[skips_before:])
        summary.show_skips()
    if not todo:
        return read
    worker = WorkerSettings(
        options.model,
        options.device,
        options.backend,
        options.batch_size,
        options.chunk_tokens,
        options.flush_sentences,
    )
    progress = tqdm(total=estimated, desc="embedding", unit=" sentences", disable=not options.progress)
    try:
        written = embed_on_ray(options.ray, writer.uri, todo, inside, worker, progress)
    except RayBuildError as exc:
        raise BuildFailed(str(exc)) from None
    finally:
        progress.close()
    embedded = written.document_rows[DocumentColumn.ID].to_pylist()
    stale = [doc_id for doc_id in embedded if doc_id in existing]
    summary.updated += len(stale)
    summary.added += len(embedded) - len(stale)
    summary.embedded_sentences += written.sentences
    writer.delete_documents(stale)
    writer.append_fragments(written.fragments, written.chunk_rows, written.document_rows, written.sentences)
    return read
