"""Change an index: add sources, sync them, remove documents; chunk and embed what is new, commit in steps.

An index records its sources (the folders and files added to it) in its manifest. Only `sync`
and `remove` drop documents: `build` and `add` embed the new and changed documents under the paths
they are given and leave every other document as it is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

from arag_mcp.indexer.command_options import terminal_text
from arag_mcp.indexer.embedding.embedder import Embedder
from arag_mcp.indexer.embedding.settings import DEFAULT_BACKEND, DEFAULT_MODEL
from arag_mcp.indexer.index.collection import checked_description
from arag_mcp.indexer.index.completeness import describe_problems
from arag_mcp.indexer.index.encoder_files import drop_other_encoders, encoder_folder, store_encoder
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.manifest import (
    FORMAT_VERSION,
    REBUILD_HINT,
    EncoderFiles,
    IndexStoreError,
    check_format,
    check_manifest,
    is_remote,
    normalise_uri,
    read_manifest,
    write_manifest,
)
from arag_mcp.indexer.index.schema import DocumentColumn
from arag_mcp.indexer.index.writer import IndexWriter, StoredDocument, build_lock
from arag_mcp.indexer.sources.files import CorpusError, Document, SkippedFile, Source, iter_documents
from arag_mcp.indexer.text.context import SENTENCE_CONTEXT
from arag_mcp.indexer.text.sentences import SPLITTER_VERSION, split_sentences
from tqdm import tqdm

from .rows import RowBatch, chunk_document, embedded_rows, queue_document, sentence_limit

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
    """Sentences embedded per write: bounds memory."""
    commit_sentences: int = 16384
    """Sentences embedded between two commits: what a killed build keeps."""
    exclude: tuple[str, ...] = ()
    """gitignore-style patterns left out of the sources added (recorded with them)."""
    follow_links: bool = False
    """Read the files that links in the folders added point to outside them (recorded with them)."""
    strict: bool = False
    """Any file or record skipped fails the command before anything is written."""
    progress: bool = True
    description: str | None = None
    """What the collection is (collection.py), replacing the index's; None keeps it, "" clears it."""
    ray: str | None = None
    """Read, chunk and embed on the Ray cluster at this address (ray_build.py); "local" starts one here."""


@dataclass
class BuildSummary:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    documents: int = 0
    chunks: int = 0
    sentences: int = 0
    embedded_sentences: int = 0
    seconds: float = 0.0
    skipped: list[SkippedFile] = field(default_factory=list)

    @property
    def sentences_per_second(self) -> float:
        return self.embedded_sentences / self.seconds if self.seconds else 0.0

    def describe(self) -> str:
        """What the command did, in one line."""
        return (
            f"added {self.added}, updated {self.updated}, removed {self.removed}, unchanged {self.unchanged}; "
            f"the index holds {self.documents} documents, {self.chunks} chunks, {self.sentences} sentences; "
            f"embedded {self.embedded_sentences} sentences in {self.seconds:.1f} s "
            f"({self.sentences_per_second:.0f} sentences/s)"
        )


def content_hash(document: Document) -> str:
    payload = json.dumps(
        [document.title, document.source, document.text, document.metadata, document.headings, document.pages],
        sort_keys=True,
    )
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
        or previous["sentence_context"] != SENTENCE_CONTEXT
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


def index_settings(uri: str) -> dict[str, Any]:
    """The model, backend and chunk size the index at `uri` was built with ({} where there is none):
    commands that extend an index use them unless told otherwise."""
    manifest = read_manifest(normalise_uri(uri))
    if manifest is None:
        return {}
    return {
        "model": manifest["model"],
        "backend": manifest["embedding_backend"],
        "chunk_tokens": manifest["chunk_tokens"],
    }


def build_index(sources: Sequence[str | Path], uri: str, options: BuildOptions = BuildOptions()) -> BuildSummary:
    """Add `sources` to the index at `uri` (created, or with `options.rebuild` started over): documents
    under them that are new or changed are embedded; no other document is touched."""
    uri = normalise_uri(uri)
    _check_apart(sources, uri)
    with build_lock(uri):
        committed = None if options.rebuild else read_manifest(uri)
        if committed is not None:
            check_format(uri, committed)
        recorded = [] if committed is None else committed["sources"]
        roots, reads = plan_sources(recorded, sources, options.exclude, options.follow_links)
        return _update(uri, options, roots, reads)


def _check_apart(sources: Sequence[str | Path], uri: str) -> None:
    """CorpusError where a source is the index folder or lies inside it: the index's own files are
    never read, so such a build would read nothing. An index inside a source folder is left out of it."""
    if is_remote(uri):
        return
    for given in sources:
        path = Source.at(given).path
        if path.is_relative_to(uri):
            where = "is the index folder" if path == Path(uri) else "is inside the index folder"
            raise CorpusError(f"{given} {where} {uri}; give --index a folder outside the documents")


def sync_index(uri: str, options: BuildOptions = BuildOptions()) -> BuildSummary:
    """Re-read every recorded source: embed new and changed documents, drop those whose files are gone."""
    uri = normalise_uri(uri)
    with build_lock(uri):
        manifest = check_manifest(uri).raw
        roots = manifest["sources"]
        if not roots:
            raise CorpusError(f"{uri} records no sources; add them with `arag-index add PATH... --index ...`")
        present = []
        for root in roots:
            if os.path.lexists(root["path"]):
                present.append(root)
            else:
                log.warning("%s no longer exists; its documents are removed and it is no longer a source", root["path"])
        reads = [
            Source(Path(root["path"]), Path(root["path"]), tuple(root["exclude"]), root.get("follow_links", False))
            for root in present
        ]
        options = replace(options, **index_settings(uri), rebuild=False)
        return _update(uri, options, present, reads, drop_unread=roots)


def remove_from_index(targets: Sequence[str], uri: str) -> BuildSummary:
    """Drop the documents with these ids, or read from files under these paths, and stop recording
    those paths as sources (a path inside a recorded folder is excluded from it)."""
    started = time.perf_counter()
    uri = normalise_uri(uri)
    summary = BuildSummary()
    with build_lock(uri):
        manifest = check_manifest(uri).raw
        settings = index_settings(uri)
        check_compatible(manifest, replace(BuildOptions(), **settings), settings["model"])
        writer = IndexWriter(uri, manifest["dimension"])
        stored = writer.existing_documents()
        roots = [dict(root) for root in manifest["sources"]]
        doomed: set[str] = set()
        for target in targets:
            if target in stored and not os.path.isabs(target):  # a record's id; a file's id is its path
                doomed.add(target)
                continue
            path = Source.at(target).path
            matched = {doc_id for doc_id, document in stored.items() if Path(document.path).is_relative_to(path)}
            if not matched and not any(Path(root["path"]).is_relative_to(path) for root in roots):
                raise CorpusError(
                    f"{target}: no document id or indexed path matches; see `arag-index list --index {uri}`"
                )
            doomed |= matched
            roots = _forget_path(roots, path)
        writer.delete_documents(sorted(doomed))
        summary.removed = len(doomed)
        vector_index = writer.finish_tables()
        committed = writer.commit({**manifest, "sources": roots, "vector_index": vector_index, **_when(started)})
        _count(summary, committed)
    return summary


def describe_index(uri: str, description: str) -> None:
    """Set what the collection at `uri` is (collection.py); "" clears it, so the derived summary
    is shown. Nothing else changes: a running server shows it in `arag://index` within seconds."""
    uri = normalise_uri(uri)
    check_manifest(uri)  # before the lock, which would create a missing folder
    with build_lock(uri):
        manifest = check_manifest(uri).raw
        write_manifest(uri, {**manifest, "description": checked_description(description)})


def plan_sources(
    recorded: Sequence[dict[str, Any]], paths: Sequence[str | Path], exclude: Sequence[str], follow_links: bool = False
) -> tuple[list[dict[str, Any]], list[Source]]:
    """The sources to record and the reads for `paths`: a path inside a recorded folder is read as
    part of it (its documents are named from that folder); a new path is recorded as a root and
    absorbs the recorded roots inside it. A root records that it follows links once a path under
    it was added so."""
    roots = [dict(root) for root in recorded]
    reads: list[Source] = []
    for given in paths:
        path = Source.at(given).path
        if not os.path.lexists(path):
            raise CorpusError(f"{given}: no such file or folder; check the path")
        covering = next((root for root in roots if path.is_relative_to(root["path"])), None)
        if covering is None:
            roots = [root for root in roots if not Path(root["path"]).is_relative_to(path)]
            covering = {"path": path.as_posix(), "exclude": []}
            roots.append(covering)
        else:
            again = "/" + path.relative_to(covering["path"]).as_posix()
            covering["exclude"] = [pattern for pattern in covering["exclude"] if pattern != again]
        covering["exclude"] = list(dict.fromkeys([*covering["exclude"], *exclude]))
        if follow_links:
            covering["follow_links"] = True
        reads.append(
            Source(Path(covering["path"]), path, tuple(covering["exclude"]), covering.get("follow_links", False))
        )
    return roots, reads


def _forget_path(roots: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """Recorded roots without `path`: roots inside it go, a folder holding it excludes it."""
    kept = []
    for root in roots:
        if Path(root["path"]).is_relative_to(path):
            continue
        if path.is_relative_to(root["path"]):
            root = {**root, "exclude": [*root["exclude"], "/" + path.relative_to(root["path"]).as_posix()]}
        kept.append(root)
    return kept


@dataclass
class Plan:
    """What the first reading of the sources found: which documents to embed, and about how much."""

    seen: dict[str, str] = field(default_factory=dict)
    """doc_id → content hash of every document read."""
    todo: dict[str, str] = field(default_factory=dict)
    """doc_id → content hash of the new and changed documents."""
    estimated: dict[str, int] = field(default_factory=dict)
    """doc_id → sentence count of each document to embed, as split before token limits."""
    files: dict[str, str] = field(default_factory=dict)
    """doc_id → the file each document to embed was read from."""


def _update(
    uri: str,
    options: BuildOptions,
    roots: list[dict[str, Any]],
    reads: list[Source],
    drop_unread: Sequence[dict[str, Any]] = (),
) -> BuildSummary:
    """Embed the new and changed documents of `reads` in committed steps, record `roots` as the
    sources, and drop the documents under `drop_unread` that were not read (unless their file could
    not be read this time)."""
    started = time.perf_counter()
    if options.ray is not None:
        if any(read.follow_links for read in reads):
            raise CorpusError("--ray reads only the files inside the folders added; leave out --follow-links")
        _ray_build()  # before any work
    summary = BuildSummary()
    previous = None if options.rebuild else read_manifest(uri)
    check_compatible(previous, options, options.model)
    embedder = Embedder(options.model, options.device, options.backend, _carried_encoder(uri, previous, options)).load()
    check_backend(previous, options, embedder.backend)
    writer = IndexWriter(uri, embedder.dimension, rebuild=options.rebuild)
    existing = writer.existing_documents()
    damaged = {doc_id: stored.problem for doc_id, stored in existing.items() if stored.problem}
    if damaged:
        log.warning(
            "%d document(s) were written in part by an earlier build (%s); those read now are embedded again",
            len(damaged),
            describe_problems(damaged),
        )
    inside = [] if is_remote(uri) else [Path(uri)]  # an index kept beside its documents

    def documents(skipped: list[SkippedFile]) -> Iterator[Document]:
        return iter_documents(reads, skipped, exclude=inside)

    reading = tqdm(documents(summary.skipped), desc="reading", unit=" documents", disable=not options.progress)
    plan = _scan(reading, existing, summary)
    if options.strict and summary.skipped:
        report_skips(summary.skipped)
        raise BuildFailed(f"{len(summary.skipped)} skipped with --strict (listed above); nothing was written")
    if options.rebuild and writer.committed is not None:
        options = replace(options, commit_sentences=sys.maxsize)  # the index in service stays until the end
    described = options.description if options.description is not None else (writer.committed or {}).get("description")
    fields = {**_manifest_fields(uri, embedder, options, roots), "description": described or ""}
    if options.ray is None:
        _embed(writer, embedder, documents([]), plan, existing, options, summary, fields, started)
    else:
        _embed_on_ray(writer, reads, inside, plan, existing, options, summary)
    unreadable = {item.file for item in summary.skipped if item.reason != "empty"}
    gone = [
        doc_id
        for doc_id, stored in existing.items()
        if doc_id not in plan.seen
        and (_under(stored.path, drop_unread) or (drop_unread and not stored.path))
        and stored.path not in unreadable
    ]
    writer.delete_documents(gone)
    left = sorted(doc_id for doc_id in damaged if doc_id not in plan.seen and doc_id not in gone)
    if left:
        log.warning(
            "%d document(s) written in part were not among the files read (%s); "
            "`arag-index sync` embeds them again, `arag-index remove ID` drops them",
            len(left),
            describe_problems({doc_id: damaged[doc_id] for doc_id in left}),
        )
    summary.removed = len(gone)
    vector_index = writer.finish_tables()
    committed = writer.commit({**fields, "vector_index": vector_index, **_when(started)})
    drop_other_encoders(uri, EncoderFiles.from_dict(committed["encoder"]))
    _count(summary, committed)
    return summary


def _carried_encoder(uri: str, previous: dict[str, Any] | None, options: BuildOptions) -> Path | None:
    """The encoder the index carries, where this build makes vectors the way the index's were made:
    an index is extended with its own encoder, never with a new export of its model."""
    if previous is None or options.rebuild or previous["embedding_backend"] != options.backend:
        return None
    if (options.device or "cpu") != "cpu":
        return None
    try:
        files = EncoderFiles.from_dict(previous.get("encoder"))
    except ValueError:
        raise IndexStoreError(f"{uri}: the manifest's encoder record is damaged; {REBUILD_HINT}") from None
    return encoder_folder(uri, files) if files else None


class BuildFailed(Exception):
    """The command could not do what it was asked; the one-line message says why."""


def report_skips(skipped: Sequence[SkippedFile]) -> None:
    """One line per file or record skipped, then their number."""
    for item in skipped:
        log.warning("skipped %s", terminal_text(str(item), keep=""))
    if skipped:
        log.warning("skipped %d file(s) or record(s), listed above", len(skipped))


def _under(path: str, roots: Sequence[dict[str, Any]]) -> bool:
    return any(Path(path).is_relative_to(root["path"]) for root in roots)


def _scan(documents: Iterable[Document], existing: dict[str, StoredDocument], summary: BuildSummary) -> Plan:
    """Read every document once: which are new or changed, and how many sentences they hold."""
    plan = Plan()
    keys: dict[str, str] = {}
    for document in documents:
        if document.doc_id in plan.seen or keys.get(doc_key(document.doc_id), document.doc_id) != document.doc_id:
            other = "appears twice" if document.doc_id in plan.seen else "has the same key as another id"
            summary.skipped.append(
                SkippedFile(document.source, f"document id {document.doc_id!r} {other}; the first is kept", "")
            )
            continue
        keys[doc_key(document.doc_id)] = document.doc_id
        digest = content_hash(document)
        plan.seen[document.doc_id] = digest
        stored = existing.get(document.doc_id)
        if stored is not None and stored.doc_hash == digest and not stored.problem:
            continue
        plan.todo[document.doc_id] = digest
        plan.estimated[document.doc_id] = len(split_sentences(document.text))
        plan.files[document.doc_id] = document.path
    return plan


def _embed(
    writer: IndexWriter,
    embedder: Embedder,
    documents: Iterable[Document],
    plan: Plan,
    existing: dict[str, StoredDocument],
    options: BuildOptions,
    summary: BuildSummary,
    fields: dict[str, Any],
    started: float,
) -> None:
    """Chunk and embed the planned documents, writing every `flush_sentences` sentences and
    committing, between two documents, every `commit_sentences`."""
    progress = tqdm(
        total=sum(plan.estimated.values()),
        desc="embedding",
        unit=" sentences",
        disable=not options.progress,
        dynamic_ncols=True,
        smoothing=0.1,
    )
    batch = RowBatch()
    since_commit = 0
    for document in documents:
        digest = plan.todo.pop(document.doc_id, None)
        if digest is None:  # unchanged, or a later document with an id already read
            continue
        if document.doc_id in existing:
            summary.updated += 1
            batch.stale.append(document.doc_id)
        else:
            summary.added += 1
        chunks = chunk_document(document, embedder, options.chunk_tokens)
        progress.total += sum(len(spans) for spans in chunks) - plan.estimated[document.doc_id]
        for _ in queue_document(batch, document, digest, chunks):
            if len(batch.sentences) >= options.flush_sentences:
                since_commit += _flush(writer, embedder, batch, options, summary, progress)
        if since_commit + len(batch.sentences) >= options.commit_sentences:
            _flush(writer, embedder, batch, options, summary, progress)
            since_commit = 0
            step_started = time.perf_counter()
            counts = writer.commit_step({**fields, **_when(started)})["counts"]
            log.debug("committed %d sentences in %.2f s", counts["sentences"], time.perf_counter() - step_started)
    _flush(writer, embedder, batch, options, summary, progress)
    progress.close()


def _flush(
    writer: IndexWriter,
    embedder: Embedder,
    batch: RowBatch,
    options: BuildOptions,
    summary: BuildSummary,
    progress: tqdm,
) -> int:
    """Drop the old rows of changed documents, embed the batch, append it and empty it; returns the
    sentences embedded."""
    writer.delete_documents(batch.stale)
    batch.stale = []
    if not batch.sentences and not batch.documents:
        return 0
    writer.add(*embedded_rows(embedder, batch, options.batch_size))
    embedded = len(batch.sentences)
    batch.clear()
    summary.embedded_sentences += embedded
    progress.update(embedded)
    return embedded


def _ray_build() -> ModuleType:
    """The Ray build (ray_build.py), whose imports fail where the `ray` extra is not installed."""
    try:
        from . import ray_build
    except ModuleNotFoundError as exc:
        raise BuildFailed(f'--ray needs {exc.name}; install it with `pip install "arag-mcp[ray]"`') from None
    return ray_build


def _embed_on_ray(
    writer: IndexWriter,
    reads: Sequence[Source],
    inside: Sequence[Path],
    plan: Plan,
    existing: dict[str, StoredDocument],
    options: BuildOptions,
    summary: BuildSummary,
) -> None:
    """Chunk, embed and write the planned documents on Ray (ray_build.py), then append what the
    workers wrote; the build's one commit lands it."""
    ray_build = _ray_build()
    if not plan.todo:
        return
    files: dict[str, tuple[Source, dict[str, str]]] = {}
    for doc_id, digest in plan.todo.items():
        path = plan.files[doc_id]
        read = next(read for read in reads if Path(path).is_relative_to(read.path))
        files.setdefault(path, (Source(read.root, Path(path), read.exclude), {}))[1][doc_id] = digest
    worker = ray_build.Worker(
        options.model,
        options.device,
        options.backend,
        options.batch_size,
        options.chunk_tokens,
        options.flush_sentences,
    )
    progress = tqdm(
        total=sum(plan.estimated.values()), desc="embedding", unit=" sentences", disable=not options.progress
    )
    try:
        written = ray_build.embed_on_ray(options.ray, writer.uri, files, inside, worker, progress)
    except ray_build.RayBuildError as exc:
        raise BuildFailed(str(exc)) from None
    finally:
        progress.close()
    embedded = written.document_rows[DocumentColumn.ID].to_pylist()
    stale = [doc_id for doc_id in embedded if doc_id in existing]
    summary.updated += len(stale)
    summary.added += len(embedded) - len(stale)
    summary.embedded_sentences += written.sentences
    writer.delete_documents(stale)
    writer.append_fragments(written.fragments, written.chunk_rows, written.document_rows)


def _manifest_fields(
    uri: str, embedder: Embedder, options: BuildOptions, roots: list[dict[str, Any]]
) -> dict[str, Any]:
    """What a build records beside its tables; the encoder is put into the index here, before a commit names it."""
    encoder = store_encoder(uri, embedder.encoder_folder) if embedder.encoder_folder else None
    return {
        "model": options.model,
        "encoder": encoder.to_dict() if encoder else None,
        "dimension": embedder.dimension,
        "embedding_backend": embedder.backend,
        "query_prompt": embedder.prompt("query"),
        "document_prompt": embedder.prompt("document"),
        "chunk_tokens": options.chunk_tokens,
        "sentence_tokens": sentence_limit(embedder, options.chunk_tokens),
        "splitter": SPLITTER_VERSION,
        "sentence_context": SENTENCE_CONTEXT,
        "sources": roots,
    }


def _when(started: float) -> dict[str, Any]:
    return {
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "build_seconds": round(time.perf_counter() - started, 3),
    }


def _count(summary: BuildSummary, manifest: dict[str, Any]) -> None:
    counts = manifest["counts"]
    summary.documents, summary.chunks, summary.sentences = counts["documents"], counts["chunks"], counts["sentences"]
    summary.unchanged = summary.documents - summary.added - summary.updated
    summary.seconds = manifest["build_seconds"]
