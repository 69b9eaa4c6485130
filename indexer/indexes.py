"""An index as commands change and read it: `Index(uri)`, then add, sync, remove, describe, watch.

An Index holds the index's store (its lock, its files) and the manifest as of its last command.
Each command that writes takes the lock and reads the committed manifest once, under it; model,
backend and chunk size default to the manifest's, and the update (build.py) works from it.
`arag-index`, its watcher, scripts and bench/ change indexes through this class (the server only
reads them); the functions beside it say what a command does with the sources it is given.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING

from arag_mcp.indexer.index.collection import checked_description
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.file_states import read_file_states
from arag_mcp.indexer.index.keywords import KeywordSegments
from arag_mcp.indexer.index.manifest import (
    Manifest,
    check_manifest,
    committed_manifest,
    describe_missing,
    read_manifest,
    write_manifest,
)
from arag_mcp.indexer.index.stores import normalise_uri, open_store
from arag_mcp.indexer.sources.document import CorpusError
from arag_mcp.indexer.sources.files import Source, is_left_out

from .build import UpdateRequest, index_folders, recorded, recorded_sources, update
from .build_model import build_embedder, check_compatible, stamped
from .build_options import BuildOptions, WatchOptions
from .build_summary import BuildSummary
from .watch import watch

if TYPE_CHECKING:  # LanceDB is imported only where a command writes
    from arag_mcp.indexer.index.writer import IndexWriter

log = logging.getLogger("arag_mcp.indexer.build")


class Index:
    """The index at `uri` (a folder or an object-store URI; made by its first `add`)."""

    def __init__(self, uri: str | Path) -> None:
        self.uri = normalise_uri(str(uri))
        self.store = open_store(self.uri)
        self.manifest: Manifest | None = None
        """The manifest as of this object's last command (None before one, or where there is no index)."""

    def require(self) -> None:
        """IndexStoreError naming the fix where no build has completed here: looked for before a
        lock is taken, which would make a folder of a missing index."""
        if read_manifest(self.uri) is None:
            raise IndexStoreError(describe_missing(self.uri))

    def committed(self) -> Manifest:
        """The committed manifest, read now (commands that only read)."""
        self.manifest = check_manifest(self.uri)
        return self.manifest

    @property
    def sources(self) -> list[Source]:
        """The sources the index recorded as of the last command."""
        return recorded_sources(self.manifest) if self.manifest else []

    def add(self, sources: Sequence[str | Path], options: BuildOptions = BuildOptions()) -> BuildSummary:
        """Add `sources` (created, or with `options.rebuild` started over): the documents under them
        that are new or changed are embedded; no other document is touched."""
        _check_apart(sources, self.uri)
        for given in sources:  # before the lock, which would make a folder of a missing index
            if not os.path.lexists(Source.at(given).path):
                raise CorpusError(f"{given}: no such file or folder; check the path")
        with self.store.lock(options.wait_for_lock):
            committed = committed_manifest(self.uri, other_format=options.rebuild)
            recorded_roots = [] if committed is None or options.rebuild else recorded_sources(committed)
            roots, reads = plan_sources(
                recorded_roots, sources, options.exclude, options.follow_links, options.include, options.gitignore
            )
            return self._update(committed, UpdateRequest(roots, reads), options)

    def sync(self, options: BuildOptions = BuildOptions()) -> BuildSummary:
        """Re-read every recorded source: embed new and changed documents, drop those whose files are gone."""
        with self.store.lock(options.wait_for_lock):
            committed = check_manifest(self.uri)
            roots = recorded_sources(committed)
            if not roots:
                raise CorpusError(f"{self.uri} records no sources; add them with `arag-index add PATH... --index ...`")
            present = []
            for root in roots:
                if os.path.lexists(root.path):
                    present.append(root)
                else:
                    log.warning(
                        "%s no longer exists; its documents are removed and it is no longer a source", root.path
                    )
            request = UpdateRequest(present, present, synced=[root.path for root in roots])
            return self._update(committed, request, options.as_index(committed))

    def sync_paths(
        self, paths: Sequence[Path], options: BuildOptions = BuildOptions(), renamed_from: Sequence[Path] = ()
    ) -> BuildSummary:
        """Re-read these paths (files or folders, present or not; relative ones from the working
        folder) where they lie under a recorded source and are not left out of it: embed their new
        and changed documents and drop those whose files are gone. What a watcher does with the paths
        it saw change. `renamed_from`: vanished paths whose documents move to a file read now with
        their content (a rename), and otherwise stay."""
        paths, renamed_from = (
            [Path(os.path.abspath(p)) for p in paths],
            [Path(os.path.abspath(p)) for p in renamed_from],
        )
        with self.store.lock(options.wait_for_lock):
            committed = check_manifest(self.uri)
            roots = recorded_sources(committed)
            inside = index_folders(self.uri)
            reads, synced, kept = [], [], []
            for path in _outermost([*paths, *renamed_from]):
                root = next((root for root in roots if path.is_relative_to(root.path)), None)
                if root is None or is_left_out(path, root, inside):
                    continue
                synced.append(path)
                if path in renamed_from:
                    kept.append(path)
                elif os.path.lexists(path):
                    reads.append(replace(root, path=path))
            request = UpdateRequest(roots, reads, synced=synced, batch=True, unless_moved=kept)
            return self._update(committed, request, options.as_index(committed))

    def remove(self, targets: Sequence[str]) -> BuildSummary:
        """Drop the documents with these ids, or read from files under these paths, and stop recording
        those paths as sources (a path inside a recorded folder is excluded from it)."""
        started = time.perf_counter()
        summary = BuildSummary()
        with self.store.lock():
            committed = check_manifest(self.uri)
            check_compatible(committed, BuildOptions().as_index(committed))
            from arag_mcp.indexer.index.writer import IndexWriter  # LanceDB: only where a command writes

            writer = IndexWriter(self.uri, committed.dimension, committed)
            roots, doomed = self._doomed(writer, committed, targets)
            writer.delete_documents(sorted(doomed))
            summary.removed = len(doomed)
            record = replace(committed, sources=tuple(recorded(roots)), vector_index=writer.finish_tables())
            writer.recorded_files = read_file_states(self.uri, committed.tables)
            files = {  # a file some of whose documents went is read again by the next sync
                file: state
                for file, state in writer.recorded_files.states.items()
                if not doomed.intersection(state.documents)
            }
            self.manifest = writer.commit(stamped(record, started), files)
        summary.count(self.manifest, started)
        return summary

    def _doomed(
        self, writer: IndexWriter, committed: Manifest, targets: Sequence[str]
    ) -> tuple[list[Source], set[str]]:
        """The sources left once `targets` are removed, and the ids of the documents that go."""
        stored = writer.existing_documents()
        roots = recorded_sources(committed)
        doomed: set[str] = set()
        for target in targets:
            if target in stored and not os.path.isabs(target):  # a record's id; a file's id is its path
                doomed.add(target)
                continue
            path = Source.at(target).path
            matched = {doc_id for doc_id, document in stored.items() if Path(document.path).is_relative_to(path)}
            if not matched and not any(root.path.is_relative_to(path) for root in roots):
                raise CorpusError(
                    f"{target}: no document id or indexed path matches; see `arag-index list --index {self.uri}`"
                )
            doomed |= matched
            roots = _forget_path(roots, path)
        return roots, doomed

    def describe(self, description: str) -> Manifest:
        """Set what the collection is (collection.py); "" clears it, so the derived summary is shown.
        Nothing else changes: a running server shows it in `arag://index` within seconds."""
        self.require()  # before the lock, which would make a folder of a missing index
        with self.store.lock():
            described = replace(check_manifest(self.uri), described_as=checked_description(description))
            write_manifest(described)
        self.manifest = described
        return described

    def merge_segments(self, wait_for_lock: bool = True) -> int:
        """Merge the keyword segments that are due (segment_writer.py), each merge committed by a
        manifest of its own; how many segments it then names (0: none were due)."""
        with self.store.lock(wait_for_lock):
            committed = check_manifest(self.uri)
            segments = KeywordSegments(self.uri, committed.segments)
            if not segments.due():
                return 0
            self.manifest = segments.merge_due(committed)
            return len(self.manifest.segments)

    def load_model(self, options: BuildOptions = BuildOptions()) -> None:
        """Load the model the next update embeds with (a watcher does at start, so that its first
        change does not wait for the model)."""
        build_embedder(self.uri, self.manifest, options.for_index(self.manifest))

    def watch(
        self, paths: Sequence[str] = (), options: WatchOptions = WatchOptions(), stop: Event | None = None
    ) -> None:
        """Sync (adding `paths` as sources first, as `add` does), then keep the index current until
        `stop` is set or SIGINT/SIGTERM arrives; the batch in hand is finished first (watch.py).
        WatcherRunning where another watcher keeps it current."""
        if not paths:
            self.require()  # before the lock, which would make a folder of a missing index
        watch(self, paths, options, stop or Event())

    def _update(self, committed: Manifest | None, request: UpdateRequest, options: BuildOptions) -> BuildSummary:
        summary = update(self.uri, committed, request, options)
        self.manifest = summary.manifest
        return summary


def plan_sources(
    recorded: Sequence[Source],
    paths: Sequence[str | Path],
    exclude: Sequence[str],
    follow_links: bool = False,
    include: Sequence[str] = (),
    gitignore: bool = True,
) -> tuple[list[Source], list[Source]]:
    """The sources to record and the reads for `paths`: a path inside a recorded folder is read as
    part of it (its documents are named from that folder); a new path is recorded as a root and
    absorbs the recorded roots inside it. A root records that it follows links once a path under
    it was added so, reads what its `.gitignore` files name once a path under it was added so, and
    keeps the include patterns of every path added under it."""
    roots = list(recorded)
    reads: list[Source] = []
    for given in paths:
        path = Source.at(given).path
        at = next((at for at, root in enumerate(roots) if path.is_relative_to(root.path)), None)
        if at is None:
            roots = [root for root in roots if not root.path.is_relative_to(path)]
            roots.append(Source(path, path))
            at = len(roots) - 1
            patterns = list(roots[at].exclude)
        else:
            again = "/" + path.relative_to(roots[at].path).as_posix()
            patterns = [pattern for pattern in roots[at].exclude if pattern != again]
        roots[at] = replace(
            roots[at],
            exclude=tuple(dict.fromkeys([*patterns, *exclude])),
            follow_links=roots[at].follow_links or follow_links,
            gitignore=roots[at].gitignore and gitignore,
            include=tuple(dict.fromkeys([*roots[at].include, *include])),
        )
        reads.append(replace(roots[at], path=path))
    return roots, reads


def _check_apart(sources: Sequence[str | Path], uri: str) -> None:
    """CorpusError where a source is the index folder or lies inside it: the index's own files are
    never read, so such a build would read nothing. An index inside a source folder is left out of it."""
    if open_store(uri).folder is None:
        return
    for given in sources:
        path = Source.at(given).path
        if path.is_relative_to(uri):
            where = "is the index folder" if path == Path(uri) else "is inside the index folder"
            raise CorpusError(f"{given} {where} {uri}; give --index a folder outside the documents")


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """The paths that lie under no other of them."""
    return [path for path in paths if not any(path != other and path.is_relative_to(other) for other in paths)]


def _forget_path(roots: list[Source], path: Path) -> list[Source]:
    """Recorded roots without `path`: roots inside it go, a folder holding it excludes it."""
    kept = []
    for root in roots:
        if root.path.is_relative_to(path):
            continue
        if path.is_relative_to(root.path):
            root = replace(root, exclude=(*root.exclude, "/" + path.relative_to(root.path).as_posix()))
        kept.append(root)
    return kept
