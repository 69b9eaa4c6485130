"""Update an index in three stages: plan what changed, embed it, commit it.

A command (indexes.py) asks for an update: which sources the index records, which of them to read
now, and under which paths documents that were not read leave. The plan compares the files listed
with the states the index recorded (changes.py), and where nothing changed the update ends there,
before LanceDB or the model is loaded. The embedding stage reads, chunks and embeds the new and
changed documents (embed_steps.py here, ray_build.py on Ray), committing in steps. The commit drops
the documents that left, finishes the tables and names them in the manifest.
"""

from __future__ import annotations

import functools
import logging
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from arag_mcp.indexer.index.completeness import describe_problems
from arag_mcp.indexer.index.encoder_files import drop_other_encoders
from arag_mcp.indexer.index.file_states import FileState, RecordedFiles, read_file_states, write_file_states
from arag_mcp.indexer.index.keywords import segments_damage
from arag_mcp.indexer.index.manifest import Manifest, RecordedSource
from arag_mcp.indexer.index.stores import open_store
from arag_mcp.indexer.sources.budget import BudgetedReader, file_reader
from arag_mcp.indexer.sources.document import CorpusError
from arag_mcp.indexer.sources.files import Source, list_files
from arag_mcp.indexer.sources.formats import READERS_VERSION

from .build_model import build_embedder, build_record, check_backend, check_compatible, stamped
from .build_options import BuildOptions
from .build_summary import BuildFailed, BuildSummary, fail_strict
from .changes import Changes, FileToRead, plan_changes
from .embed_steps import EmbeddingWork, LocalEmbedding, ReadDocuments

if TYPE_CHECKING:  # LanceDB is imported only where a command writes: a sync that finds nothing changed does not
    from arag_mcp.indexer.embedding.embedder import Embedder
    from arag_mcp.indexer.index.stored_documents import StoredDocument
    from arag_mcp.indexer.index.writer import IndexWriter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpdateRequest:
    """What a command asks of an update."""

    roots: list[Source]
    """The sources the index records once it commits."""
    reads: list[Source]
    """What is read now: sources, or paths under them."""
    synced: Sequence[Path] = ()
    """Paths under which documents not read now leave the index (unless their file could not be read)."""
    batch: bool = False
    """A watcher's batch: the stored documents of the files under `synced` are looked up, not all read."""
    unless_moved: Sequence[Path] = ()
    """Paths among `synced` whose documents leave only by a move to a file read now (a rename)."""


@dataclass
class Plan:
    """What the update does: the changes against the files' recorded states."""

    changes: Changes
    listed: list[FileToRead]
    recorded: RecordedFiles | None
    read_again: bool
    """Every file is read again: the readers changed since the index's files were read."""

    @property
    def states(self) -> dict[str, FileState]:
        return {} if self.recorded is None else self.recorded.states


def update(uri: str, committed: Manifest | None, request: UpdateRequest, options: BuildOptions) -> BuildSummary:
    """Embed the new and changed documents of `request.reads` in committed steps, record its roots as
    the index's sources, and drop the documents under `request.synced` that were not read.
    `committed` is the index's manifest as the command found it, under its lock. Files whose size and
    time are those recorded when they were last read are not opened."""
    return Update(uri, committed, request, options.for_index(committed)).run()


class Update:
    """One update of the index at `uri`, stage by stage."""

    def __init__(self, uri: str, committed: Manifest | None, request: UpdateRequest, options: BuildOptions) -> None:
        if options.rebuild and committed is not None:  # the index in service stays until the end
            options = replace(options, commit_sentences=sys.maxsize, commit_seconds=math.inf)
        self.uri, self.committed, self.request, self.options = uri, committed, request, options
        self.previous = None if options.rebuild else committed
        """The index this update extends (None: a new index, or one rebuilt)."""
        self.summary = BuildSummary()
        self.started = time.perf_counter()

    def run(self) -> BuildSummary:
        if self.options.ray is not None:
            if any(read.follow_links for read in self.request.reads):
                raise CorpusError("--ray reads only the files inside the folders added; leave out --follow-links")
            ray_build()  # before any work
        check_compatible(self.previous, self.options)
        plan = self.plan()
        if self._unchanged(plan):
            return self.summary
        with file_reader(self.options.file_budget) as reader:  # started first, it loads the readers beside the model
            if self.options.strict:
                _check_strict(reader, plan.changes.read, self.summary)
            embedder = build_embedder(self.uri, self.previous, self.options)
            check_backend(self.previous, self.options, embedder.backend)
            writer = self._writer(embedder, plan)
            work, damaged = self._work(reader, writer, plan)
            record = build_record(self.uri, self.previous, embedder, self.options, self._sources(), self._readers())
            read = self._embed(work, embedder, record, plan)
            return self._commit(work, record, read, damaged, plan.changes)

    def plan(self) -> Plan:
        """The files to read, those gone and those unchanged, from the states the index recorded."""
        recorded = None if self.previous is None else read_file_states(self.uri, self.previous.tables)
        states = {} if recorded is None else recorded.states
        listed = list(list_files(self.request.reads, self.summary.skipped, exclude=index_folders(self.uri)))
        self.summary.show_skips()
        read_again = self.previous is not None and self.previous.readers != READERS_VERSION
        changes = plan_changes(listed, states, self.request.synced, read_again)
        self.summary.skipped_before = changes.skipped_before
        return Plan(changes, listed, recorded, read_again)

    def _unchanged(self, plan: Plan) -> bool:
        """Whether nothing is to be written: nothing read or gone, the same sources, sound keyword
        segments. The files whose times alone changed are recorded anew."""
        previous, changes = self.previous, plan.changes
        if (
            previous is None
            or plan.recorded is None
            or changes.read
            or changes.gone
            or tuple(self._sources()) != previous.sources
            or segments_damage(previous, contents=not self.request.batch) is not None
        ):
            return False
        if self.options.strict and self.summary.failures:
            fail_strict(self.summary)
        if changes.refreshed:
            write_file_states(self.uri, previous.tables, {**plan.states, **changes.unchanged}, since=plan.recorded)
        self.summary.count(previous, self.started)
        return True

    def _writer(self, embedder: Embedder, plan: Plan) -> IndexWriter:
        from arag_mcp.indexer.index.writer import IndexWriter  # LanceDB: only where a command writes

        writer = IndexWriter(
            self.uri,
            embedder.dimension,
            self.committed,
            rebuild=self.options.rebuild,
            check_contents=not self.request.batch,
            merge_segments=self.options.merge_segments,
        )
        writer.recorded_files = plan.recorded
        return writer

    def _work(self, reader: BudgetedReader, writer: IndexWriter, plan: Plan) -> tuple[EmbeddingWork, dict[str, str]]:
        """What the embedding stage works with, and the documents an earlier build wrote in part
        (doc_id → what they lack), which this one completes where it reads them: the plan then
        reads their files again."""
        request = self.request
        looked_up = _documents_under(plan.states, request.synced) if request.batch and plan.states else None
        existing = writer.existing_documents(looked_up)
        damaged = {doc_id: stored.problem for doc_id, stored in existing.items() if stored.problem}
        if damaged:
            log.warning(
                "%d document(s) were written in part by an earlier build (%s); those read now are completed, "
                "the sentences already written keeping their vectors",
                len(damaged),
                describe_problems(damaged),
            )
            writer.recount()
            damaged_files = {existing[doc_id].path for doc_id in damaged}
            states = {file: state for file, state in plan.states.items() if file not in damaged_files}
            plan.changes = plan_changes(plan.listed, states, request.synced, plan.read_again)
        files = {file: state for file, state in plan.states.items() if file not in plan.changes.gone}
        files.update(plan.changes.unchanged)
        for item in plan.changes.read:
            files.pop(item.file, None)
        work = EmbeddingWork(reader, writer, self.options, self.summary, existing, files, self.started)
        return work, damaged

    def _embed(self, work: EmbeddingWork, embedder: Embedder, record: Manifest, plan: Plan) -> ReadDocuments:
        if self.options.ray is None:
            return LocalEmbedding(work, embedder, record).run(plan.changes, _moves(plan.changes, plan.states))
        return ray_build().embed_changes(work, plan.changes.read, index_folders(self.uri))

    def _commit(
        self, work: EmbeddingWork, record: Manifest, read: ReadDocuments, damaged: dict[str, str], changes: Changes
    ) -> BuildSummary:
        """Drop the documents that left, finish the tables and commit: the build is served from here."""
        writer = work.writer
        seen = {**read.seen, **{doc_id: "" for state in changes.unchanged.values() for doc_id in state.documents}}
        gone = self._gone(work.existing, seen, read.moved)
        writer.delete_documents(gone)
        left = sorted(doc_id for doc_id in damaged if doc_id not in seen and doc_id not in gone)
        if left:
            log.warning(
                "%d document(s) written in part were not among the files read (%s); "
                "`arag-index sync` embeds them again, `arag-index remove ID` drops them",
                len(left),
                describe_problems({doc_id: damaged[doc_id] for doc_id in left}),
            )
        self.summary.removed = len(gone)
        record = replace(record, vector_index=writer.finish_tables())
        committed = writer.commit(stamped(record, work.started), work.files)
        drop_other_encoders(self.uri, committed.encoder)
        self.summary.count(committed, self.started)
        return self.summary

    def _gone(self, existing: Mapping[str, StoredDocument], seen: Mapping[str, str], moved: set[str]) -> list[str]:
        """The stored documents under the synced paths that were not read now, but those whose file
        could not be read this time and those that moved to a renamed file."""
        synced, unless_moved = self.request.synced, self.request.unless_moved
        skips = [*self.summary.skipped, *self.summary.skipped_before]
        unreadable = {item.file for item in skips if item.reason != "empty"}
        return [
            doc_id
            for doc_id, stored in existing.items()
            if doc_id not in seen
            and doc_id not in moved
            and (_under(stored.path, synced) or (synced and not stored.path))
            and not _under(stored.path, unless_moved)
            and stored.path not in unreadable
        ]

    def _sources(self) -> list[RecordedSource]:
        return recorded(self.request.roots)

    def _readers(self) -> int | None:
        """The READERS_VERSION every file of the index was read with once this update commits: this
        version where it reads them all (a new index, a full sync), else the one recorded."""
        every_root = {root.path for root in self.request.roots} <= {read.path for read in self.request.reads}
        return READERS_VERSION if self.previous is None or every_root else self.previous.readers


def recorded(roots: Sequence[Source]) -> list[RecordedSource]:
    """Sources as the manifest records them."""
    return [
        RecordedSource(root.root.as_posix(), root.exclude, root.follow_links, root.gitignore, root.include)
        for root in roots
    ]


def recorded_sources(manifest: Manifest) -> list[Source]:
    """The sources an index records, each a folder or file read whole."""
    return [
        Source(Path(root.path), Path(root.path), root.exclude, root.follow_links, root.gitignore, root.include)
        for root in manifest.sources
    ]


def index_folders(uri: str) -> list[Path]:
    """The folders the index at `uri` takes up on this machine (none for an object store): reading
    sources passes over them."""
    folder = open_store(uri).folder
    return [folder] if folder else []


def ray_build() -> ModuleType:
    """The Ray build (ray_build.py), whose imports fail where the `ray` extra is not installed."""
    try:
        from . import ray_build as module
    except ModuleNotFoundError as exc:
        raise BuildFailed(f'--ray needs {exc.name}; install it with `pip install "arag-mcp[ray]"`') from None
    return module


def _check_strict(reader: BudgetedReader, to_read: Sequence[FileToRead], summary: BuildSummary) -> None:
    """Under --strict, any skip fails the command before anything is written: the files to read are read once first."""
    for item in to_read:
        for _ in reader.read(item.path, item.source, summary.skipped):
            pass
    if summary.failures:
        fail_strict(summary)


def _documents_under(states: dict[str, FileState], synced: Sequence[Path]) -> list[str]:
    """The ids of the documents read from the recorded files under `synced`."""
    return [doc_id for file, state in states.items() if _under(file, synced) for doc_id in state.documents]


def _moves(changes: Changes, states: dict[str, FileState]) -> dict[str, FileState]:
    """file read → the recorded state of a file gone in the same command with the same content:
    a renamed file, whose documents keep their vectors where their title is unchanged."""
    gone = {states[file].sha256: states[file] for file in changes.gone if states[file].documents}
    return {item.file: gone[item.sha256] for item in changes.read if item.sha256 in gone}


def _under(path: str, roots: Sequence[Path]) -> bool:
    """Whether `path` (a file key: resolved, POSIX) is one of `roots` or lies under one, compared as
    strings, as changes.py compares them (a Path made for each stored document cost seconds at
    100k documents)."""
    return any(path == root.as_posix() or path.startswith(_folder_prefix(root)) for root in roots)


@functools.lru_cache(maxsize=1024)
def _folder_prefix(root: Path) -> str:
    return root.as_posix().rstrip("/") + "/"
