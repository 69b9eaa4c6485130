"""The index being served: opened and its model loaded off the start-up path; follows new builds."""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import TYPE_CHECKING

from arag_mcp.indexer.index.encoder_files import check_encoder_present, encoder_folder
from arag_mcp.indexer.index.errors import IndexStoreError, StoreUnanswered
from arag_mcp.indexer.index.manifest import EncoderFiles, Manifest, check_manifest, committed_manifest
from arag_mcp.indexer.index.store_reads import StoreState
from arag_mcp.indexer.index.stores import normalise_uri, open_store

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.indexer.embedding.embedder import Embedder
    from arag_mcp.indexer.index.snapshot import IndexSnapshot

log = logging.getLogger(__name__)

OPEN_WAIT_SECONDS = 60.0

EmbeddingKey = tuple[str, str, "EncoderFiles | None"]
"""(model, embedding backend, the encoder the index carries): what a build's vectors were made with,
so queries are made the same way."""


def embedding_key(manifest: Manifest) -> EmbeddingKey:
    return manifest.model, manifest.embedding_backend, manifest.encoder


def _load_vectors(snapshot: IndexSnapshot) -> None:
    """Open the sentences (and read exact search's vectors) now, off the request path, so
    semantic_search does not wait for them."""
    try:
        in_memory = snapshot.sentences.in_memory
        if in_memory is not None:
            in_memory.load()
    except Exception as exc:  # noqa: BLE001 - semantic_search reads them again and reports the error
        log.warning("could not read the sentence vectors of %s: %s", snapshot.uri, exc)


def _verify_segments(snapshot: IndexSnapshot) -> None:
    """Check the checksums of the keyword segments' large files (each segment once per process:
    a later build takes over the segments it shares), off the request path. A file that does not
    match is refused from then on, so keyword searches say to sync rather than answer from it."""
    try:
        snapshot.verify_segments()
    except IndexStoreError as exc:
        log.warning("%s", exc)
    except OSError as exc:
        log.warning("could not check the keyword segments of %s: %s", snapshot.uri, exc)


class ModelNotReady(Exception):
    """The embedding model did not finish loading in time, or failed to load."""


class LiveIndex:
    """The latest committed build of one index, and the embedding model it was built with.

    Construction only reads the manifest (no storage engine, no model), so a server can answer
    the MCP handshake at once; `start()` opens the tables and loads the model on a thread.
    A completed `arag-index build` is picked up at most `reload_seconds` after it commits; a
    request runs against one snapshot, so it never mixes two builds.
    """

    def __init__(self, uri: str, reload_seconds: float = 2.0, device: str | None = None) -> None:
        self.uri = normalise_uri(uri)
        self.store = open_store(self.uri)
        self.manifest: Manifest = check_manifest(self.uri)
        if self.manifest.encoder:
            check_encoder_present(self.uri, self.manifest.encoder)
        self.reload_seconds = reload_seconds
        self.device = device
        self._snapshot: IndexSnapshot | None = None
        self._opened = threading.Event()
        self._open_error: str | None = None
        self._checked = 0.0
        self._lock = threading.Lock()
        self._probing = threading.Lock()
        self._model_lock = threading.Lock()
        self._embedders: dict[EmbeddingKey, Embedder] = {}
        self._ready: dict[EmbeddingKey, threading.Event] = {}
        self._errors: dict[EmbeddingKey, str] = {}
        self._opening: threading.Thread | None = None
        self._to_load: queue.SimpleQueue[tuple[IndexSnapshot, bool]] = queue.SimpleQueue()
        self._reads_queued = 0
        """Builds queued for `_read_in_turn` whose vectors are not yet read: `close` waits for them."""
        self._reads_done = threading.Condition()

    def start(self, load_model: bool = True) -> None:
        """Open the index, then load its model (unless `load_model` is false), on background threads."""
        self._opening = threading.Thread(target=self._open, args=(load_model,), name="arag-open", daemon=True)
        self._opening.start()
        threading.Thread(target=self._read_in_turn, name="arag-reads", daemon=True).start()

    def close(self, timeout: float = 60.0) -> None:
        """Wait for the opening, and the model and vector loads it started: a process must not exit
        while one runs inside LanceDB or ONNX Runtime (a daemon thread stopped there aborts the
        interpreter, as a call that fails before it needs the index would)."""
        deadline = time.monotonic() + timeout
        if self._opening is not None:
            self._opening.join(timeout)
        for event in list(self._ready.values()):
            event.wait(max(0.0, deadline - time.monotonic()))
        with self._reads_done:
            self._reads_done.wait_for(lambda: not self._reads_queued, max(0.0, deadline - time.monotonic()))

    def _open(self, load_model: bool) -> None:
        try:
            self._snapshot = _opened(self.uri)
            self.manifest = self._snapshot.manifest
            self._checked = time.monotonic()
        except IndexStoreError as exc:
            self._open_error = str(exc)
            log.error("%s", exc)
        finally:
            self._opened.set()
        if self._snapshot is not None:
            if load_model:
                self._ensure_loading(embedding_key(self.manifest))
            self._queue_reads(self._snapshot, vectors=load_model)

    def snapshot(self) -> IndexSnapshot:
        """The newest committed build (checked for a newer one at most every `reload_seconds`)."""
        if not self._opened.wait(OPEN_WAIT_SECONDS):
            raise IndexStoreError(f"{self.uri} is still being opened; retry in a few seconds")
        if self._snapshot is None:
            raise IndexStoreError(self._open_error or f"{self.uri} could not be opened")
        if time.monotonic() - self._checked >= self.reload_seconds and self._lock.acquire(blocking=False):
            try:  # one request looks; the others are served the build they have meanwhile
                if time.monotonic() - self._checked >= self.reload_seconds:
                    self._reload_if_changed()
                    self._checked = time.monotonic()
            finally:
                self._lock.release()
        return self._snapshot

    def look_again(self) -> None:
        """The next request looks for a new build at once: a watcher beside the server has just committed one."""
        self._checked = 0.0

    def _reload_if_changed(self) -> None:
        try:
            manifest = self._read_manifest()
            served = self._snapshot.manifest
            if manifest and (manifest.tables, manifest.segments) != (served.tables, served.segments):
                self._snapshot = _opened(self.uri, self._snapshot)
                self.manifest = self._snapshot.manifest
                log.info("serving the build of %s committed at %s", self.uri, self.manifest.built_at)
                self._queue_reads(self._snapshot)
            elif manifest and manifest != served:  # the same build, described anew
                self.manifest = manifest
                self._snapshot = self._snapshot.replaced(manifest=manifest)
        except StoreUnanswered:
            pass  # keep serving the build we have; the store's silence is logged once (store_reads.py)
        except Exception as exc:  # noqa: BLE001 - keep serving the build we have
            log.warning("could not open the new build of %s, still serving the previous one: %s", self.uri, exc)

    def _read_manifest(self) -> Manifest | None:
        """The committed manifest, read within the store deadline on an object store."""
        return self.store.read(lambda: committed_manifest(self.uri))

    def store_state(self) -> StoreState | None:
        """How the object store holding the index answers (None for a local index). Looks at the store
        again on a thread of its own, one look at a time, so the state follows the store without traffic."""
        state = self.store.state()
        if state is not None and self._probing.acquire(blocking=False):
            threading.Thread(target=self._probe_store, name="arag-store-probe", daemon=True).start()
        return state

    def _probe_store(self) -> None:
        try:
            self._read_manifest()
        except IndexStoreError:
            pass  # the store's state says so
        finally:
            self._probing.release()

    def _queue_reads(self, snapshot: IndexSnapshot, vectors: bool = True) -> None:
        """Read the build's vectors (unless not `vectors`) and check its keyword segments, in turn."""
        with self._reads_done:
            self._reads_queued += 1
        self._to_load.put((snapshot, vectors))

    def _read_in_turn(self) -> None:
        """Read each build's vectors and check its segments, one build after another, on this one
        thread: with a thread of its own per build, the allocator kept much of each replaced build's
        memory (bench/memory.py). `close` waits for the vectors (read inside LanceDB), not for the
        check, which only reads files and may be left unfinished when the process exits."""
        while True:
            snapshot, vectors = self._to_load.get()
            if vectors:
                _load_vectors(snapshot)
            with self._reads_done:
                self._reads_queued -= 1
                self._reads_done.notify_all()
            _verify_segments(snapshot)
            del snapshot  # not kept while waiting for the next build

    def _ensure_loading(self, key: EmbeddingKey) -> threading.Event:
        """The event set once the model of `key` has loaded (or failed); starts loading it the first time."""
        with self._model_lock:
            event = self._ready.get(key)
            if event is None:
                self._errors.pop(key, None)
                event = self._ready[key] = threading.Event()
                threading.Thread(target=self._load, args=(key, event), name="arag-model", daemon=True).start()
        return event

    def _load(self, key: EmbeddingKey, done: threading.Event) -> None:
        from arag_mcp.indexer.embedding.embedder import Embedder  # ONNX Runtime: off the handshake's path

        started = time.perf_counter()
        model, backend, encoder = key
        try:
            folder = encoder_folder(self.uri, encoder) if encoder else None
            embedder = Embedder(model, self.device, backend, folder).load()
            embedder.encode_queries(["warm-up"])
            self._embedders[key] = embedder
            log.info("embedding model %s (%s) ready in %.1f s", model, embedder.backend, time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - reported to the caller of query_vector
            self._errors[key] = str(exc)
            log.error("embedding model %s failed to load: %s", model, exc)
            if isinstance(exc, StoreUnanswered):  # the encoder is on a store that did not answer: load it again later
                with self._model_lock:
                    self._ready.pop(key, None)
        finally:
            done.set()

    def query_vectors(self, snapshot: IndexSnapshot, queries: list[str], timeout: float) -> np.ndarray:
        """The queries' embeddings under the model `snapshot` was built with."""
        key = embedding_key(snapshot.manifest)
        loaded = self._ensure_loading(key).wait(timeout)
        error, embedder = self._errors.get(key), self._embedders.get(key)
        if loaded and error is not None:
            raise ModelNotReady(f"semantic_search is unavailable: {error}; use keyword_search")
        if embedder is None:  # still loading, or loading again after its store did not answer
            raise ModelNotReady(
                "the embedding model is still loading; retry semantic_search in a few seconds "
                "(keyword_search and chunk_read work meanwhile)"
            )
        return embedder.encode_queries(queries)


def _opened(uri: str, previous: IndexSnapshot | None = None) -> IndexSnapshot:
    """The committed build at `uri` (snapshot.open_index), taking over what `previous` read."""
    from arag_mcp.indexer.index.snapshot import open_index  # LanceDB and Arrow: off the handshake's path

    return open_index(uri, previous=previous)
