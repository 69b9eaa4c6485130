"""What a command that changes an index is told: how to embed, how often to commit, what to read."""

from __future__ import annotations

from dataclasses import dataclass, replace

from arag_mcp.indexer.embedding.settings import DEFAULT_BACKEND, DEFAULT_MODEL
from arag_mcp.indexer.index.manifest import Manifest
from arag_mcp.indexer.sources.budget import FileBudget

DEFAULT_CHUNK_TOKENS = 1000


@dataclass(frozen=True)
class BuildOptions:
    model: str | None = None
    """The embedding model (None: the index's, else DEFAULT_MODEL)."""
    device: str | None = None
    backend: str | None = None
    """How the model runs (None: the index's, else DEFAULT_BACKEND)."""
    batch_size: int = 32
    chunk_tokens: int | None = None
    """Target tokens per chunk (None: the index's, else DEFAULT_CHUNK_TOKENS)."""
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

    def for_index(self, committed: Manifest | None) -> BuildOptions:
        """These options with the model, backend and chunk size settled: those given, else those of
        the index as committed (unless rebuilt), else the defaults."""
        own = None if committed is None or self.rebuild else committed
        return replace(
            self,
            model=self.model or (own.model if own else DEFAULT_MODEL),
            backend=self.backend or (own.embedding_backend if own else DEFAULT_BACKEND),
            chunk_tokens=self.chunk_tokens or (own.chunk_tokens if own else DEFAULT_CHUNK_TOKENS),
        )

    def as_index(self, committed: Manifest) -> BuildOptions:
        """These options with the index's own model, backend and chunk size: a sync re-reads the
        sources the way they were read."""
        return replace(self, model=None, backend=None, chunk_tokens=None, rebuild=False).for_index(committed)


@dataclass(frozen=True)
class WatchOptions:
    """What a watch is told (watch.py): how each batch builds, how often every source is swept."""

    build: BuildOptions = BuildOptions(progress=False)
    reconcile_seconds: float = 300.0
    poll: bool = False
    """Poll the files instead of waiting for the system's events (network and virtual file systems)."""
    parent_pid: int | None = None
    """Stop once the process of this id is gone (a server running the watcher beside it)."""
