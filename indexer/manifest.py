"""The index manifest: what a build holds and which table versions make it up.

Kept free of LanceDB so that the server can validate an index and answer the MCP handshake
before the storage engine is even imported.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

FORMAT = "arag-index"
FORMAT_VERSION = 2
MANIFEST_FILE = "manifest.json"


class IndexStoreError(Exception):
    """The index location cannot be used; the message names the fix."""


def is_remote(uri: str) -> bool:
    return "://" in uri and not uri.startswith("file://")


def normalise_uri(uri: str) -> str:
    """Local paths become absolute (GUI hosts start servers in '/'); remote URIs pass through."""
    if is_remote(uri):
        return uri.rstrip("/")
    return str(Path(uri.removeprefix("file://")).expanduser().resolve())


def read_manifest(uri: str) -> dict[str, Any] | None:
    """The committed manifest at `uri`, or None where no build has completed there."""
    fs, path = pafs.FileSystem.from_uri(_join(uri, MANIFEST_FILE)) if is_remote(uri) else (None, None)
    try:
        if fs is None:
            raw = Path(uri, MANIFEST_FILE).read_bytes()
        else:
            with fs.open_input_stream(path) as stream:
                raw = stream.read()
    except (FileNotFoundError, OSError):
        return None
    try:
        manifest = json.loads(raw)
    except json.JSONDecodeError:
        raise IndexStoreError(
            f"{_join(uri, MANIFEST_FILE)} is corrupt; rebuild with `arag-index build ... --rebuild`"
        ) from None
    if manifest.get("format") != FORMAT:
        return None
    return manifest


def write_manifest(uri: str, manifest: dict[str, Any]) -> None:
    """Replace the manifest atomically (rename locally; a single PUT on object stores)."""
    raw = json.dumps(manifest, indent=2, sort_keys=True).encode("utf-8")
    if is_remote(uri):
        fs, path = pafs.FileSystem.from_uri(_join(uri, MANIFEST_FILE))
        with fs.open_output_stream(path) as stream:
            stream.write(raw)
        return
    fd, tmp = tempfile.mkstemp(dir=uri, prefix=".manifest-", suffix=".json")
    with os.fdopen(fd, "wb") as handle:
        handle.write(raw)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, Path(uri, MANIFEST_FILE))


def _join(uri: str, name: str) -> str:
    return f"{uri.rstrip('/')}/{name}"


def describe_missing(uri: str) -> str:
    """One line saying why `uri` holds no index and what to do."""
    if not is_remote(uri) and not Path(uri).exists():
        return f"no index at {uri}: the folder does not exist; build one with `arag-index build SOURCE --index {uri}` or fix --index"
    return f"{uri} is not an arag-mcp index (no {MANIFEST_FILE} from a completed build); build one with `arag-index build SOURCE --index {uri}` or fix --index"


def check_manifest(uri: str) -> dict[str, Any]:
    """The committed manifest at `uri` (normalised); IndexStoreError names the fix when there is none."""
    manifest = read_manifest(uri)
    if manifest is None:
        raise IndexStoreError(describe_missing(uri))
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IndexStoreError(
            f"{uri} has index format {manifest.get('format_version')}, this arag-mcp reads {FORMAT_VERSION}; "
            "rebuild it with `arag-index build ... --rebuild`"
        )
    return manifest
