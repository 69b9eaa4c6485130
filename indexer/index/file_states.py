"""What each source file was when the index last read it: how commands tell changed files from
unchanged ones by their metadata alone.

Kept in ``URI/files.json`` beside the manifest and written just before it by each commit, naming
the table versions that commit names: a file written by a commit that never landed (a build
killed between the two writes) names other versions than the manifest and is not trusted, so the
next command reads every file once and writes it again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .manifest import read_index_file, write_index_file

HASH_BLOCK = 1 << 20
FILES_FILE = "files.json"


@dataclass(frozen=True)
class FileState:
    """One source file as last read: unchanged while its size and modification time are, or
    where those changed, while its content hash is."""

    size: int
    mtime_ns: int
    sha256: str
    documents: dict[str, str] = field(default_factory=dict)
    """doc_id → content hash of each document read from it, in reading order."""
    skipped: tuple[str, ...] = ()
    """Why it, or records in it, yielded no document (reported when it was read)."""

    def same_metadata(self, size: int, mtime_ns: int) -> bool:
        return (self.size, self.mtime_ns) == (size, mtime_ns)


def read_file_states(uri: str, tables: dict[str, int]) -> dict[str, FileState]:
    """file → its state, as of the commit that named `tables`; {} where none was recorded for it."""
    raw = read_index_file(uri, FILES_FILE)
    if raw is None:
        return {}
    try:
        stored = json.loads(raw)
        if stored.get("tables") != tables:
            return {}
        return {
            file: FileState(
                state["size"], state["mtime_ns"], state["sha256"], dict(state["documents"]), tuple(state["skipped"])
            )
            for file, state in stored["files"].items()
        }
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):  # damaged: every file is read again
        return {}


def write_file_states(uri: str, tables: dict[str, int], states: dict[str, FileState]) -> None:
    """Record `states` as those of the commit naming `tables`."""
    files: dict[str, Any] = {
        file: {
            "size": state.size,
            "mtime_ns": state.mtime_ns,
            "sha256": state.sha256,
            "documents": state.documents,
            "skipped": list(state.skipped),
        }
        for file, state in sorted(states.items())
    }
    write_index_file(uri, FILES_FILE, json.dumps({"tables": tables, "files": files}).encode("utf-8"))


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read a block at a time; OSError where it cannot be read."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()
