"""Change an index: add sources, sync them, remove documents; chunk and embed what is new, commit in steps.

An index records its sources (the folders and files added to it) in its manifest. Only `sync`
and `remove` drop documents: `build` and `add` embed the new and changed documents under the paths
they are given and leave every other document as it is.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from arag_mcp.indexer.command_options import terminal_text
from arag_mcp.indexer.embedding.embedder import Embedder
from arag_mcp.indexer.embedding.settings import DEFAULT_BACKEND, DEFAULT_MODEL
from arag_mcp.indexer.index.collection import checked_description
from arag_mcp.indexer.index.completeness import describe_problems
from arag_mcp.indexer.index.encoder_files import drop_other_encoders, encoder_folder, store_encoder
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.file_states import FileState, read_file_states, write_file_states
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.keywords import KeywordSegments, segments_damage
from arag_mcp.indexer.index.manifest import (
    FORMAT_VERSION,
    REBUILD_HINT,
    EncoderFiles,
    check_format,
    check_manifest,
    read_manifest,
    write_manifest,
)
from arag_mcp.indexer.index.schema import DocumentColumn
from arag_mcp.indexer.index.stores import normalise_uri, open_store
from arag_mcp.indexer.sources.budget import BudgetedReader, FileBudget, file_reader
from arag_mcp.indexer.sources.document import LEFT_OUT, CorpusError, Document, SkippedFile
from arag_mcp.indexer.sources.files import Source, is_left_out, list_files
from arag_mcp.indexer.sources.formats import READERS_VERSION
from arag_mcp.indexer.text.context import SENTENCE_CONTEXT
from arag_mcp.indexer.text.sentences import SPLITTER_VERSION, split_sentences
from tqdm import tqdm

from .changes import Changes, FileToRead, plan_changes
from .progress import BuildProgress
from .rows import RowBatch, chunk_document, embedded_rows, queue_document, sentence_limit

if TYPE_CHECKING:  # LanceDB is imported only where a command writes: a sync that finds nothing changed does not
    from arag_mcp.indexer.index.stored_documents import StoredDocument
    from arag_mcp.indexer.index.writer import IndexWriter

log = logging.getLogger(__name__)

FIRST_BATCH_SENTENCES = 256
"""The first write batch's sentences to embed, which measures the model's rate (`_batch_limit`)."""
MIN_BATCH_SENTENCES = 64
"""The fewest sentences a write batch embeds, however slow the model: each batch is a table write."""


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
    commit_seconds: float = 60.0
    """Seconds of embedding between two commits, whichever of the two comes first."""
    exclude: tuple[str, ...] = ()
    """gitignore-style patterns left out of the sources added (recorded with them)."""
    follow_links: bool = False
    """Read the files that links in the folders added point to outside them (recorded with them)."""
    include: tuple[str, ...] = ()
    """gitignore-style patterns of files of other types the sources added read as plain text
    (recorded with them)."""
    gitignore: bool = True
    """Leave out what the `.gitignore` files of the folders added name; False is recorded with them."""
    strict: bool = False
    """Any file or record skipped fails the command before anything is written."""
    progress: bool = True
    ray: str | None = None
    """Read, chunk and embed on the Ray cluster at this address (ray_build.py); "local" starts one here."""
    file_budget: FileBudget = FileBudget()
    """The time and memory one file (or record) may take to read (sources/budget.py)."""
    wait_for_lock: bool = True
    """Where another command holds the index, wait for it (False: raise IndexBusy, as a watcher's
    batches, which retry, do)."""
    merge_segments: bool = True
    """Merge the keyword segments that are due after each commit; a watcher's batches leave them to
    its idle moments (`merge_segments`), so that a save is never searchable later for a merge."""


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
    embedding_seconds: float = 0.0
    """Of `seconds`, the time the model took to embed (not its loading, nor reading the files)."""
    skipped: list[SkippedFile] = field(default_factory=list)
    skipped_before: list[SkippedFile] = field(default_factory=list)
    """What unchanged files skipped when they were read (and reported)."""
    skips_shown: int = 0
    """How many of `skipped` have been told (`show_skips`)."""

    @property
    def failures(self) -> list[SkippedFile]:
        """What --strict fails on: every skip and notice but the paths a folder's own rules leave out."""
        return [item for item in [*self.skipped, *self.skipped_before] if not item.left_out]

    def show_skips(self, left_out: bool = True) -> None:
        """One line for each file or record skipped since the last call: a long build tells them as
        they happen, not at its end. `left_out`: tell the paths a folder's own rules leave out too
        (a watcher told them at its first sync, and its sweeps list them again: at DEBUG level)."""
        for item in self.skipped[self.skips_shown :]:
            said = "skipped " if item.counted else ""
            level = logging.DEBUG if item.left_out and not left_out else logging.WARNING
            log.log(level, "%s%s", said, terminal_text(str(item), keep=""))
        self.skips_shown = len(self.skipped)

    @property
    def sentences_per_second(self) -> float:
        """The model's rate while it embedded (a Ray build's: over the whole command)."""
        seconds = self.embedding_seconds or self.seconds
        return self.embedded_sentences / seconds if seconds else 0.0

    def describe(self) -> str:
        """What the command did, in one line."""
        rate = f" ({self.sentences_per_second:.0f} sentences/s while embedding)" if self.embedded_sentences else ""
        return (
            f"added {self.added}, updated {self.updated}, removed {self.removed}, unchanged {self.unchanged}; "
            f"the index holds {self.documents} documents, {self.chunks} chunks, {self.sentences} sentences; "
            f"embedded {self.embedded_sentences} sentences in {self.seconds:.1f} s{rate}"
        )


def content_hash(document: Document) -> str:
    """What a document's rows are made from; a reader's own sentences count only where it gives them,
    so documents read by the prose rules keep the hash they had."""
    parts = [document.title, document.source, document.text, document.metadata, document.headings, document.pages]
    payload = json.dumps(parts + ([document.sentences] if document.sentences else []), sort_keys=True)
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
    return {} if manifest is None else _settings(manifest)


def _settings(manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": manifest["model"],
        "backend": manifest["embedding_backend"],
        "chunk_tokens": manifest["chunk_tokens"],
    }


def recorded_sources(manifest: dict[str, Any]) -> list[Source]:
    """The sources an index records: each a folder or file read whole, with its exclude patterns,
    whether links out of it are followed and its include patterns."""
    return [
        Source(
            Path(root["path"]),
            Path(root["path"]),
            tuple(root["exclude"]),
            bool(root.get("follow_links", False)),
            gitignore=bool(root.get("gitignore", True)),
            include=tuple(root.get("include", ())),
        )
        for root in manifest["sources"]
    ]


def _recorded(roots: Sequence[Source]) -> list[dict[str, Any]]:
    """Sources as the manifest records them (follow_links, gitignore and include only where they are
    not the default)."""
    return [
        {
            "path": root.root.as_posix(),
            "exclude": list(root.exclude),
            **({"follow_links": True} if root.follow_links else {}),
            **({} if root.gitignore else {"gitignore": False}),
            **({"include": list(root.include)} if root.include else {}),
        }
        for root in roots
    ]


def build_index(sources: Sequence[str | Path], uri: str, options: BuildOptions = BuildOptions()) -> BuildSummary:
    """Add `sources` to the index at `uri` (created, or with `options.rebuild` started over): documents
    under them that are new or changed are embedded; no other document is touched."""
    uri = normalise_uri(uri)
    _check_apart(sources, uri)
    for given in sources:  # before the lock, which would make a folder of a missing index
        if not os.path.lexists(Source.at(given).path):
            raise CorpusError(f"{given}: no such file or folder; check the path")
    with open_store(uri).lock(options.wait_for_lock):
        committed = None if options.rebuild else read_manifest(uri)
        if committed is not None:
            check_format(uri, committed)
        recorded = [] if committed is None else recorded_sources(committed)
        roots, reads = plan_sources(
            recorded, sources, options.exclude, options.follow_links, options.include, options.gitignore
        )
        return _update(uri, options, committed, roots, reads)


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


def sync_index(uri: str, options: BuildOptions = BuildOptions()) -> BuildSummary:
    """Re-read every recorded source: embed new and changed documents, drop those whose files are gone."""
    uri = normalise_uri(uri)
    with open_store(uri).lock(options.wait_for_lock):
        manifest = check_manifest(uri).raw
        roots = recorded_sources(manifest)
        if not roots:
            raise CorpusError(f"{uri} records no sources; add them with `arag-index add PATH... --index ...`")
        present = []
        for root in roots:
            if os.path.lexists(root.path):
                present.append(root)
            else:
                log.warning("%s no longer exists; its documents are removed and it is no longer a source", root.path)
        options = replace(options, **_settings(manifest), rebuild=False)
        return _update(uri, options, manifest, present, present, synced=[root.path for root in roots])


def sync_paths(
    uri: str, paths: Sequence[Path], options: BuildOptions = BuildOptions(), renamed_from: Sequence[Path] = ()
) -> BuildSummary:
    """Re-read these paths (files or folders, present or not) where they lie under a recorded source
    and are not left out of it: embed their new and changed documents and drop those whose files
    are gone. What a watcher does with the paths it saw change. `renamed_from`: vanished paths
    whose documents move to a file read now with their content (a rename), and otherwise stay."""
    uri = normalise_uri(uri)
    with open_store(uri).lock(options.wait_for_lock):
        manifest = check_manifest(uri).raw
        roots = recorded_sources(manifest)
        inside = index_folders(uri)
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
        options = replace(options, **_settings(manifest), rebuild=False)
        return _update(uri, options, manifest, roots, reads, synced=synced, batch=True, unless_moved=kept)


def index_folders(uri: str) -> list[Path]:
    """The folders the index at `uri` takes up on this machine (none for an object store): reading
    sources passes over them."""
    folder = open_store(uri).folder
    return [folder] if folder else []


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """The paths that lie under no other of them."""
    return [path for path in paths if not any(path != other and path.is_relative_to(other) for other in paths)]


def remove_from_index(targets: Sequence[str], uri: str) -> BuildSummary:
    """Drop the documents with these ids, or read from files under these paths, and stop recording
    those paths as sources (a path inside a recorded folder is excluded from it)."""
    started = time.perf_counter()
    uri = normalise_uri(uri)
    summary = BuildSummary()
    with open_store(uri).lock():
        manifest = check_manifest(uri).raw
        settings = _settings(manifest)
        check_compatible(manifest, replace(BuildOptions(), **settings), settings["model"])
        from arag_mcp.indexer.index.writer import IndexWriter

        writer = IndexWriter(uri, manifest["dimension"])
        stored = writer.existing_documents()
        roots = recorded_sources(manifest)
        doomed: set[str] = set()
        for target in targets:
            if target in stored and not os.path.isabs(target):  # a record's id; a file's id is its path
                doomed.add(target)
                continue
            path = Source.at(target).path
            matched = {doc_id for doc_id, document in stored.items() if Path(document.path).is_relative_to(path)}
            if not matched and not any(root.path.is_relative_to(path) for root in roots):
                raise CorpusError(
                    f"{target}: no document id or indexed path matches; see `arag-index list --index {uri}`"
                )
            doomed |= matched
            roots = _forget_path(roots, path)
        writer.delete_documents(sorted(doomed))
        summary.removed = len(doomed)
        vector_index = writer.finish_tables()
        writer.recorded_files = read_file_states(uri, manifest["tables"])
        files = {  # a file some of whose documents went is read again by the next sync
            file: state
            for file, state in writer.recorded_files.states.items()
            if not doomed.intersection(state.documents)
        }
        fields = {**manifest, "sources": _recorded(roots), "vector_index": vector_index, **_when(started)}
        _count(summary, writer.commit(fields, files), started)
    return summary


def describe_index(uri: str, description: str) -> None:
    """Set what the collection at `uri` is (collection.py); "" clears it, so the derived summary
    is shown. Nothing else changes: a running server shows it in `arag://index` within seconds."""
    uri = normalise_uri(uri)
    check_manifest(uri)  # before the lock, which would create a missing folder
    with open_store(uri).lock():
        manifest = check_manifest(uri).raw
        write_manifest(uri, {**manifest, "description": checked_description(description)})


def merge_segments(uri: str, wait_for_lock: bool = True) -> int:
    """Merge the keyword segments of the index at `uri` that are due (segment_writer.py), each
    merge committed by a manifest of its own; how many segments it then names (0: none were due)."""
    uri = normalise_uri(uri)
    with open_store(uri).lock(wait_for_lock):
        manifest = check_manifest(uri)
        segments = KeywordSegments(uri, manifest.segments)
        return len(segments.merge_due(manifest.raw)["segments"]) if segments.due() else 0


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


def _update(
    uri: str,
    options: BuildOptions,
    committed: dict[str, Any] | None,
    roots: list[Source],
    reads: list[Source],
    synced: Sequence[Path] = (),
    batch: bool = False,
    unless_moved: Sequence[Path] = (),
) -> BuildSummary:
    """Embed the new and changed documents of `reads` in committed steps, record `roots` as the
    sources, and drop the documents under `synced` that were not read (unless their file could
    not be read this time). `committed` is the index's manifest as the command found it. Files
    whose size and time are those recorded when they were last read are not opened. A `batch`
    (a watcher's) looks up the stored documents of the files under `synced` rather than reading
    every stored document, where the files' states are recorded. The documents under
    `unless_moved` (paths among `synced`) leave only by a move to a file read now."""
    started = time.perf_counter()
    if options.ray is not None:
        if any(read.follow_links for read in reads):
            raise CorpusError("--ray reads only the files inside the folders added; leave out --follow-links")
        _ray_build()  # before any work
    summary = BuildSummary()
    previous = None if options.rebuild else committed
    check_compatible(previous, options, options.model)
    inside = index_folders(uri)  # an index kept beside its documents
    recorded = None if previous is None else read_file_states(uri, previous["tables"])
    states = None if recorded is None else recorded.states
    listed = list(list_files(reads, summary.skipped, exclude=inside))
    summary.show_skips()
    read_again = previous is not None and previous.get("readers") != READERS_VERSION
    changes = plan_changes(listed, states or {}, synced, read_again)
    summary.skipped_before = changes.skipped_before
    described = (previous or {}).get("description", "")
    if (
        previous is not None
        and states is not None
        and not (changes.read or changes.gone)
        and _recorded(roots) == previous["sources"]
        and segments_damage(uri, previous, contents=not batch) is None
    ):
        if options.strict and summary.failures:
            _fail_strict(summary)
        if changes.refreshed:
            write_file_states(uri, previous["tables"], {**states, **changes.unchanged}, since=recorded)
        _count(summary, previous, started)
        return summary
    with file_reader(options.file_budget) as reader:  # started first, it loads the readers beside the model
        if options.strict:
            _check_strict(reader, changes.read, summary)
        carried = _carried_encoder(uri, previous, options)
        embedder = _model(uri, carried, options)
        check_backend(previous, options, embedder.backend)
        from arag_mcp.indexer.index.writer import IndexWriter

        writer = IndexWriter(
            uri,
            embedder.dimension,
            rebuild=options.rebuild,
            check_contents=not batch,
            merge_segments=options.merge_segments,
        )
        writer.recorded_files = recorded
        looked_up = _documents_under(states, synced) if batch and states else None
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
            changes = plan_changes(
                listed, _without(states or {}, {existing[doc_id].path for doc_id in damaged}), synced, read_again
            )
        if options.rebuild and writer.committed is not None:  # the index in service stays until the end
            options = replace(options, commit_sentences=sys.maxsize, commit_seconds=math.inf)
        fields = {
            **_manifest_fields(uri, embedder, options, roots, carried),
            "description": described,
            "readers": _readers_version(previous, roots, reads),
        }
        files = {file: state for file, state in (states or {}).items() if file not in changes.gone}
        files.update(changes.unchanged)
        for item in changes.read:
            files.pop(item.file, None)
        if options.ray is None:
            moves = _moves(changes, states or {})
            read = _embed(reader, writer, embedder, changes, files, existing, moves, options, summary, fields, started)
        else:
            read = _embed_on_ray(reader, writer, changes.read, files, inside, existing, options, summary)
        seen = {**read.seen, **{doc_id: "" for state in changes.unchanged.values() for doc_id in state.documents}}
        unreadable = {item.file for item in [*summary.skipped, *summary.skipped_before] if item.reason != "empty"}
        gone = [
            doc_id
            for doc_id, stored in existing.items()
            if doc_id not in seen
            and doc_id not in read.moved
            and (_under(stored.path, synced) or (synced and not stored.path))
            and not _under(stored.path, unless_moved)
            and stored.path not in unreadable
        ]
        writer.delete_documents(gone)
        left = sorted(doc_id for doc_id in damaged if doc_id not in seen and doc_id not in gone)
        if left:
            log.warning(
                "%d document(s) written in part were not among the files read (%s); "
                "`arag-index sync` embeds them again, `arag-index remove ID` drops them",
                len(left),
                describe_problems({doc_id: damaged[doc_id] for doc_id in left}),
            )
        summary.removed = len(gone)
        vector_index = writer.finish_tables()
        committed = writer.commit({**fields, "vector_index": vector_index, **_when(started)}, files)
        drop_other_encoders(uri, EncoderFiles.from_dict(committed["encoder"]))
        _count(summary, committed, started)
        return summary


def load_embedder(uri: str, options: BuildOptions = BuildOptions()) -> None:
    """Load the model the next sync of `uri` embeds with (a watcher does at start, so that its first
    change does not wait for the model)."""
    uri = normalise_uri(uri)
    _model(uri, _carried_encoder(uri, None if options.rebuild else read_manifest(uri), options), options)


def _model(uri: str, carried: EncoderFiles | None, options: BuildOptions) -> Embedder:
    """The model a build embeds with: the encoder the index carries where it has one (`carried`)."""
    return _embedder(options.model, options.device, options.backend, encoder_folder(uri, carried) if carried else None)


@functools.lru_cache(maxsize=1)
def _embedder(model: str, device: str | None, backend: str, encoder: Path | None) -> Embedder:
    """The model loaded once per process: a watcher's batches, one after another, share it."""
    return Embedder(model, device, backend, encoder).load()


def _carried_encoder(uri: str, previous: dict[str, Any] | None, options: BuildOptions) -> EncoderFiles | None:
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
    return files


def _documents_under(states: dict[str, FileState], synced: Sequence[Path]) -> list[str]:
    """The ids of the documents read from the recorded files under `synced`."""
    return [doc_id for file, state in states.items() if _under(file, synced) for doc_id in state.documents]


def _without(states: dict[str, FileState], files: set[str]) -> dict[str, FileState]:
    return {file: state for file, state in states.items() if file not in files}


def _moves(changes: Changes, states: dict[str, FileState]) -> dict[str, FileState]:
    """file read → the recorded state of a file gone in the same command with the same content:
    a renamed file, whose documents keep their vectors where their title is unchanged."""
    gone = {states[file].sha256: states[file] for file in changes.gone if states[file].documents}
    return {item.file: gone[item.sha256] for item in changes.read if item.sha256 in gone}


class BuildFailed(Exception):
    """The command could not do what it was asked; the one-line message says why."""


def by_reason(items: Sequence[SkippedFile]) -> str:
    """ "29 unsupported type .png, 5 binary, 2 unreadable": how many of each kind, most first."""
    counts = Counter(item.kind.removeprefix(LEFT_OUT) for item in items)
    return ", ".join(f"{count} {kind}" for kind, count in counts.most_common())


def report_skips(summary: BuildSummary) -> None:
    """The skips not yet told, one line each, then their number; those skipped before by files that
    have not changed since, in one line (listed at DEBUG level)."""
    summary.show_skips()
    skipped = [item for item in summary.skipped if item.counted]
    skipped_before = [item for item in summary.skipped_before if item.counted]
    if skipped:
        log.warning("skipped %d file(s) or record(s), listed above: %s", len(skipped), by_reason(skipped))
    left_out = [item for item in summary.skipped if item.left_out]
    if left_out:
        log.warning("left out %d path(s), listed above: %s", len(left_out), by_reason(left_out))
    for item in skipped_before:
        log.debug("still skipped %s", item)
    if skipped_before:
        files = len({item.file for item in skipped_before})
        log.warning(
            "%d file(s) or record(s) in %d unchanged file(s) are still skipped, as reported when they were read "
            "(--log-level DEBUG lists them)",
            len(skipped_before),
            files,
        )


def _check_strict(reader: BudgetedReader, to_read: Sequence[FileToRead], summary: BuildSummary) -> None:
    """Under --strict, any skip fails the command before anything is written: the files to read are read once first."""
    for item in to_read:
        for _ in reader.read(item.path, item.source, summary.skipped):
            pass
    if summary.failures:
        _fail_strict(summary)


def _fail_strict(summary: BuildSummary) -> None:
    report_skips(summary)
    count = len(summary.failures)
    raise BuildFailed(f"{count} skipped with --strict (listed above); nothing was written")


def _under(path: str, roots: Sequence[Path]) -> bool:
    """Whether `path` (a file key: resolved, POSIX) is one of `roots` or lies under one, compared as
    strings, as changes.py compares them (a Path made for each stored document cost seconds at
    100k documents)."""
    return any(path == root.as_posix() or path.startswith(_folder_prefix(root)) for root in roots)


@functools.lru_cache(maxsize=1024)
def _folder_prefix(root: Path) -> str:
    return root.as_posix().rstrip("/") + "/"


@dataclass
class ReadDocuments:
    """What the embedding step read."""

    seen: dict[str, str] = field(default_factory=dict)
    """doc_id → content hash of every document read."""
    moved: set[str] = field(default_factory=set)
    """Ids whose rows went to a renamed file's documents."""


class _Ids:
    """Document ids read so far: a second document with an id, or with another id of the same key, is skipped."""

    def __init__(self) -> None:
        self.keys: dict[str, str] = {}

    def clash(self, document: Document) -> str:
        """Why the document is skipped ("" where it is not); records its id otherwise."""
        known = self.keys.get(doc_key(document.doc_id))
        if known is None:
            self.keys[doc_key(document.doc_id)] = document.doc_id
            return ""
        other = "appears twice" if known == document.doc_id else "has the same key as another id"
        return f"document id {document.doc_id!r} {other}; the first is kept"


def _embed(
    reader: BudgetedReader,
    writer: IndexWriter,
    embedder: Embedder,
    changes: Changes,
    files: dict[str, FileState],
    existing: Mapping[str, StoredDocument],
    moves: dict[str, FileState],
    options: BuildOptions,
    summary: BuildSummary,
    fields: dict[str, Any],
    started: float,
) -> ReadDocuments:
    """Read each file to read once; chunk and embed its new and changed documents, writing every
    `flush_sentences` sentences and committing every `commit_sentences` (between two documents) or
    `commit_seconds` (when the time comes, the batch in hand written first: between two chunks,
    inside a long document), whichever comes first. `files` gets the state of each file read whole."""
    progress = BuildProgress(sum(item.size for item in changes.read), options.progress)
    batch = RowBatch()
    read = ReadDocuments()
    ids = _Ids()
    for state in changes.unchanged.values():
        for doc_id in state.documents:
            ids.keys.setdefault(doc_key(doc_id), doc_id)
    since_commit, last_commit = 0, time.monotonic()
    try:
        for item in changes.read:
            skips_before = len(summary.skipped)
            documents: dict[str, str] = {}
            renamed_from = list(moves[item.file].documents) if item.file in moves else []
            for place, document in enumerate(reader.read(item.path, item.source, summary.skipped)):
                progress.document_read()
                clash = ids.clash(document)
                if clash:
                    summary.skipped.append(SkippedFile(document.source, clash, ""))
                    continue
                digest = content_hash(document)
                read.seen[document.doc_id] = documents[document.doc_id] = digest
                stored = existing.get(document.doc_id)
                if stored is not None and stored.doc_hash == digest and not stored.problem:
                    continue
                old_id = renamed_from[place] if place < len(renamed_from) else None
                if (
                    old_id in existing
                    and not existing[old_id].problem
                    and writer.move_document(
                        old_id, document.doc_id, digest, document.title, document.source, document.path
                    )
                ):
                    read.moved.add(old_id)
                    summary.updated += 1
                    continue
                if document.doc_id in existing:
                    summary.updated += 1
                    batch.stale.append(document.doc_id)
                else:
                    summary.added += 1
                earlier = [doc_id for doc_id in (document.doc_id, old_id) if doc_id in existing]
                known = writer.sentence_vectors(earlier) if earlier else None
                chunks = chunk_document(document, embedder, options.chunk_tokens)
                for _ in queue_document(batch, document, digest, chunks, known):
                    due = time.monotonic() - last_commit >= options.commit_seconds
                    if (
                        due
                        or len(batch.sentences) >= options.flush_sentences
                        or batch.to_embed >= _batch_limit(options, summary)
                    ):
                        since_commit += _flush(writer, embedder, batch, options, summary, progress)
                    if due:  # the document so far: a long one is committed in parts
                        _commit_step(writer, {**fields, **_when(started)}, files, document.doc_id)
                        since_commit, last_commit = 0, time.monotonic()
                due = time.monotonic() - last_commit >= options.commit_seconds
                if since_commit + batch.to_embed >= options.commit_sentences or due:
                    _flush(writer, embedder, batch, options, summary, progress)
                    _commit_step(writer, {**fields, **_when(started)}, files)
                    since_commit, last_commit = 0, time.monotonic()
            progress.file_read(item.size)
            _record_state(files, item, documents, summary.skipped[skips_before:])
            summary.show_skips()
        _flush(writer, embedder, batch, options, summary, progress)
    finally:
        progress.close()
    return read


def _commit_step(
    writer: IndexWriter, manifest: dict[str, Any], files: dict[str, FileState], in_progress: str | None = None
) -> None:
    """A timed commit: the whole documents written, and `in_progress`'s chunks written so far (a
    document that alone outlasts --commit-seconds; the next command completes it, reusing their
    vectors, if this one is stopped)."""
    started = time.perf_counter()
    counts = writer.commit_step(manifest, files, in_progress)["counts"]
    log.debug("committed %d sentences in %.2f s", counts["sentences"], time.perf_counter() - started)


def _record_state(
    files: dict[str, FileState], item: FileToRead, documents: dict[str, str], skips: Sequence[SkippedFile]
) -> None:
    """Record the file as read, with the reasons of its skips; a file skipped for a budget is left
    unrecorded, so that the next sync reads it again (under the limits it is given)."""
    mine = [skip for skip in skips if skip.file == item.file]
    if item.sha256 and not any(skip.retry for skip in mine):
        files[item.file] = FileState(item.size, item.mtime_ns, item.sha256, documents, tuple(s.reason for s in mine))


def _batch_limit(options: BuildOptions, summary: BuildSummary) -> int:
    """Sentences to embed per write batch: `flush_sentences`, or fewer where the model is slow, so
    that a batch takes about half of `commit_seconds` and commits land on time (a commit waits for
    the batch in hand); before the model's rate is known, FIRST_BATCH_SENTENCES."""
    if not summary.embedded_sentences:
        return min(options.flush_sentences, FIRST_BATCH_SENTENCES)
    timely = int(summary.sentences_per_second * options.commit_seconds / 2)
    return min(options.flush_sentences, max(MIN_BATCH_SENTENCES, timely))


def _flush(
    writer: IndexWriter,
    embedder: Embedder,
    batch: RowBatch,
    options: BuildOptions,
    summary: BuildSummary,
    progress: BuildProgress,
) -> int:
    """Drop the old rows of changed documents, embed the batch (but the sentences whose vectors are
    known), append it and empty it; returns the sentences embedded."""
    writer.delete_documents(batch.stale)
    batch.stale = []
    if not batch.sentences and not batch.documents:
        return 0
    embedded = batch.to_embed
    started = time.perf_counter()
    rows = embedded_rows(embedder, batch, options.batch_size, progress.embedded)
    summary.embedding_seconds += time.perf_counter() - started
    writer.add(*rows)
    batch.clear()
    summary.embedded_sentences += embedded
    return embedded


def _ray_build() -> ModuleType:
    """The Ray build (ray_build.py), whose imports fail where the `ray` extra is not installed."""
    try:
        from . import ray_build
    except ModuleNotFoundError as exc:
        raise BuildFailed(f'--ray needs {exc.name}; install it with `pip install "arag-mcp[ray]"`') from None
    return ray_build


def _embed_on_ray(
    reader: BudgetedReader,
    writer: IndexWriter,
    to_read: Sequence[FileToRead],
    files: dict[str, FileState],
    inside: Sequence[Path],
    existing: Mapping[str, StoredDocument],
    options: BuildOptions,
    summary: BuildSummary,
) -> ReadDocuments:
    """Chunk, embed and write the new and changed documents on Ray (ray_build.py), then append what
    the workers wrote; the build's one commit lands it. The files are read here once to tell which
    documents are new or changed, and again by the workers."""
    ray_build = _ray_build()
    read = ReadDocuments()
    ids = _Ids()
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
        _record_state(files, item, documents, summary.skipped[skips_before:])
        summary.show_skips()
    if not todo:
        return read
    worker = ray_build.WorkerSettings(
        options.model,
        options.device,
        options.backend,
        options.batch_size,
        options.chunk_tokens,
        options.flush_sentences,
    )
    progress = tqdm(total=estimated, desc="embedding", unit=" sentences", disable=not options.progress)
    try:
        written = ray_build.embed_on_ray(options.ray, writer.uri, todo, inside, worker, progress)
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
    writer.append_fragments(written.fragments, written.chunk_rows, written.document_rows, written.sentences)
    return read


def _readers_version(previous: dict[str, Any] | None, roots: Sequence[Source], reads: Sequence[Source]) -> int | None:
    """The READERS_VERSION every file of the index was read with once this build commits: this
    version where the build reads them all (a new index, a full sync), else the one recorded."""
    every_root = {root.path for root in roots} <= {read.path for read in reads}
    return READERS_VERSION if previous is None or every_root else previous.get("readers")


def _manifest_fields(
    uri: str, embedder: Embedder, options: BuildOptions, roots: Sequence[Source], carried: EncoderFiles | None
) -> dict[str, Any]:
    """What a build records beside its tables. The encoder the index carries stays as recorded (its
    files were checked against it); a new one is put into the index here, before a commit names it."""
    encoder = carried or (store_encoder(uri, embedder.encoder_folder) if embedder.encoder_folder else None)
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
        "sources": _recorded(roots),
    }


def _when(started: float) -> dict[str, Any]:
    return {
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "build_seconds": round(time.perf_counter() - started, 3),
    }


def _count(summary: BuildSummary, manifest: dict[str, Any], started: float) -> None:
    counts = manifest["counts"]
    summary.documents, summary.chunks, summary.sentences = counts["documents"], counts["chunks"], counts["sentences"]
    summary.unchanged = summary.documents - summary.added - summary.updated
    summary.seconds = round(time.perf_counter() - started, 3)
