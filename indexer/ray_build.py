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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
from tqdm import tqdm

from .build import (
    BuildFailed,
    BuildOptions,
    BuildSummary,
    Plan,
    RowBatch,
    chunk_document,
    embedded_rows,
    queue_document,
)
from .embedding.embedder import Embedder
from .index.fragments import write
from .index.schema import CHUNKS, DOCUMENTS, TABLES, ChunkColumn, DocumentColumn, chunks_schema, documents_schema
from .index.writer import IndexWriter, StoredDocument, table_rows, table_uri
from .sources.files import Source, iter_documents

try:
    import ray
    import ray.data
except ImportError:
    raise BuildFailed('--ray needs Ray; install it with `pip install "arag-mcp[ray]"`') from None

log = logging.getLogger(__name__)

LOCAL_RAY = "local"
"""The --ray address that starts a Ray on this machine instead of joining a cluster."""
DOCUMENTS_PER_TASK = 64
"""Documents an actor chunks and embeds per call: what Ray retries when a worker dies."""


def embed_on_ray(
    writer: IndexWriter,
    reads: Sequence[Source],
    inside: Sequence[Path],
    plan: Plan,
    existing: dict[str, StoredDocument],
    options: BuildOptions,
    summary: BuildSummary,
) -> None:
    """Chunk, embed and write the planned documents on the Ray cluster at `options.ray`, then append
    what the workers wrote to the tables (uncommitted: the caller's commit lands it)."""
    if not plan.todo:
        return
    fragments: dict[str, list[str]] = {name: [] for name in TABLES}
    chunk_rows: list[pa.Table] = []
    document_rows: list[pa.Table] = []
    progress = tqdm(
        total=sum(plan.estimated.values()),
        desc="embedding",
        unit=" sentences",
        disable=not options.progress,
        dynamic_ncols=True,
    )
    with _cluster(options.ray):
        try:
            for row in _pipeline(writer.uri, reads, inside, plan, options).iter_rows():
                written = pickle.loads(row["written"])
                for name, listed in written["fragments"].items():
                    fragments[name].extend(listed)
                chunk_rows.append(written["chunks"])
                document_rows.append(written["documents"])
                summary.embedded_sentences += written["sentences"]
                progress.update(written["sentences"])
        except ray.exceptions.RayError as exc:
            raise BuildFailed(
                f"the build failed on Ray ({_first_line(exc)}); the index keeps its last commit"
            ) from None
    progress.close()
    documents = pa.concat_tables(document_rows)
    embedded = documents[DocumentColumn.ID].to_pylist()
    stale = [doc_id for doc_id in embedded if doc_id in existing]
    summary.updated += len(stale)
    summary.added += len(embedded) - len(stale)
    writer.delete_documents(stale)
    writer.append_fragments(fragments, pa.concat_tables(chunk_rows), documents)


@contextmanager
def _cluster(address: str | None) -> Iterator[None]:
    """Join the cluster at `address` (or start a local Ray) unless this process already did; leave it after."""
    if ray.is_initialized():
        yield
        return
    try:
        ray.init(
            address=None if address in (None, LOCAL_RAY) else address,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise BuildFailed(f"cannot start or reach Ray at {address!r} ({_first_line(exc)}); check --ray") from None
    try:
        yield
    finally:
        ray.shutdown()


def _pipeline(
    uri: str, reads: Sequence[Source], inside: Sequence[Path], plan: Plan, options: BuildOptions
) -> ray.data.Dataset:
    """Read the planned files, then chunk, embed and write their documents in a pool of actors, one per CPU
    (or GPU, for --device cuda) of the cluster."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    gpu = bool(options.device and options.device.startswith("cuda"))
    workers = max(1, int(ray.cluster_resources().get("GPU" if gpu else "CPU", 1)))
    return (
        ray.data.from_items(_file_items(reads, inside, plan), override_num_blocks=max(1, len(set(plan.files.values()))))
        .flat_map(_read_file, num_cpus=0)
        .map_batches(
            _ChunkEmbedWrite,
            fn_constructor_kwargs={"uri": uri, "options": options},
            batch_size=DOCUMENTS_PER_TASK,
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=0 if gpu else 1,
            num_gpus=1 if gpu else 0,
        )
    )


def _file_items(reads: Sequence[Source], inside: Sequence[Path], plan: Plan) -> list[dict[str, Any]]:
    """One item per file to read: the source it is read as part of, and its documents to embed with their hashes."""
    todo: dict[str, dict[str, str]] = {}
    for doc_id, digest in plan.todo.items():
        todo.setdefault(plan.files[doc_id], {})[doc_id] = digest
    items = []
    for file, documents in todo.items():
        read = next(read for read in reads if Path(file).is_relative_to(read.path))
        items.append(
            {
                "source": pickle.dumps((Source(read.root, Path(file), read.exclude), list(inside))),
                "todo": json.dumps(documents),
            }
        )
    return items


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

    def __init__(self, uri: str, options: BuildOptions) -> None:
        self.uri = uri
        self.options = options
        self.embedder = Embedder(options.model, options.device, options.backend).load()

    def __call__(self, documents: dict[str, Any]) -> pa.Table:
        """Fragments of the documents' rows, the rows' ids (checked whole before the commit) and the sentence count."""
        written: dict[str, Any] = {
            "fragments": {name: [] for name in TABLES},
            "chunks": [],
            "documents": [],
            "sentences": 0,
        }
        batch = RowBatch()
        for raw, digest in zip(documents["document"], documents["digest"]):
            document = pickle.loads(raw)
            for _ in queue_document(batch, document, digest, chunk_document(document, self.embedder, self.options)):
                if len(batch.sentences) >= self.options.flush_sentences:
                    self._write(batch, written)
        self._write(batch, written)
        c, d = ChunkColumn, DocumentColumn
        result = {
            "fragments": written["fragments"],
            "chunks": pa.concat_tables(written["chunks"]).select([c.ID, c.DOC_ID, c.PART, c.PARTS]),
            "documents": pa.concat_tables(written["documents"]).select([d.ID, d.CHUNKS]),
            "sentences": written["sentences"],
        }
        return pa.table({"written": pa.array([pickle.dumps(result)], pa.binary())})

    def _write(self, batch: RowBatch, written: dict[str, Any]) -> None:
        if not batch.sentences and not batch.documents:
            return
        rows = table_rows(*embedded_rows(self.embedder, batch, self.options))
        for name, table in rows.items():
            written["fragments"][name].extend(write(table_uri(self.uri, name), table))
        written["chunks"].append(rows.get(CHUNKS, chunks_schema().empty_table()))
        written["documents"].append(rows.get(DOCUMENTS, documents_schema().empty_table()))
        written["sentences"] += len(batch.sentences)
        batch.clear()


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
