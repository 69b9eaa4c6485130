"""What each source file was when the index last read it: how commands tell changed files from
unchanged ones by their metadata alone.

Kept in ``URI/files.json`` (a whole record, naming the table versions of the commit it is of) and
``URI/files-log.json`` (the changes of each later commit: the files whose state changed and those
gone, each entry naming the versions it goes from and to). A commit adds its entry to the log, so
it writes what changed rather than every file's state; once the log is large beside the whole
record (`_log_full`), the commit writes a whole record again and an empty log. Both are written
just before the manifest: an entry or record written by a commit that never landed names versions
no manifest names, and is passed over (a whole record is not trusted, so the next command reads
every file once and writes it again).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .stores import open_store

HASH_BLOCK = 1 << 20
FILES_FILE = "files.json"
LOG_FILE = "files-log.json"
LOG_MIN_BYTES = 64 * 1024
"""A log is kept up to this size whatever the whole record's."""
LOG_PER_RECORD = 4096
"""A log is kept up to sqrt(LOG_PER_RECORD x the whole record's bytes) bytes: each commit rewrites
the log (half that size on average), and the whole record is written again once the log is full,
so that neither grows as fast as the record a commit used to rewrite whole."""


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

    @classmethod
    def of(cls, stored: dict[str, Any]) -> FileState:
        return cls(
            stored["size"], stored["mtime_ns"], stored["sha256"], dict(stored["documents"]), tuple(stored["skipped"])
        )

    def stored(self) -> dict[str, Any]:
        return {**asdict(self), "skipped": list(self.skipped)}


@dataclass(frozen=True)
class RecordedFiles:
    """The file states of one commit, as files.json and its log record them, and what the next
    commit needs to record its own as a change of these."""

    states: dict[str, FileState]
    """file → its state ({} where nothing trusted is recorded for the commit asked for)."""
    tables: dict[str, int] | None = None
    """The versions of the commit these are of; None where nothing trusted was recorded."""
    base_tables: dict[str, int] | None = None
    """The versions the whole record names."""
    entries: tuple[dict[str, Any], ...] = ()
    """The log's entries from the whole record to `tables`, as stored."""
    base_bytes: int = 0
    log_bytes: int = 0


def read_file_states(uri: str, tables: dict[str, int]) -> RecordedFiles:
    """The file states as of the commit that named `tables`."""
    raw = open_store(uri).read_file(FILES_FILE)
    if raw is None:
        return RecordedFiles({})
    try:
        stored = json.loads(raw)
        base_tables = stored["tables"]
        states = {file: FileState.of(state) for file, state in stored["files"].items()}
        entries = _log_to(open_store(uri).read_file(LOG_FILE), base_tables, tables)
        if entries is None:
            return RecordedFiles({})
        for entry in entries:
            states.update((file, FileState.of(state)) for file, state in entry["files"].items())
            for file in entry["gone"]:
                states.pop(file, None)
        log_bytes = len(json.dumps(entries))
        return RecordedFiles(states, tables, base_tables, tuple(entries), len(raw), log_bytes)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):  # damaged: every file is read again
        return RecordedFiles({})


def _log_to(raw: bytes | None, base_tables: dict[str, int], tables: dict[str, int]) -> list[dict[str, Any]] | None:
    """The log's entries that lead from the whole record's versions to `tables` (the last time they
    are reached: a touched file's states are recorded anew without a commit); None where they
    never are. Entries past that point were written by a commit that never landed."""
    entries = []
    if raw is not None:
        log = json.loads(raw)
        if log["base"] == base_tables:
            entries = log["entries"]
    reached = 0 if base_tables == tables else None
    current = base_tables
    for at, entry in enumerate(entries):
        if entry["from"] != current:
            break
        current = entry["tables"]
        if current == tables:
            reached = at + 1
    return None if reached is None else entries[:reached]


def write_file_states(
    uri: str, tables: dict[str, int], states: dict[str, FileState], since: RecordedFiles | None = None
) -> RecordedFiles:
    """Record `states` as those of the commit naming `tables`: as a change of `since` (the states
    the last commit recorded) where there are such, in the log, else as a whole record."""
    if since is not None and since.tables is not None and not _log_full(since):
        changed = {file: state.stored() for file, state in states.items() if since.states.get(file) != state}
        gone = sorted(file for file in since.states if file not in states)
        entry = {"from": since.tables, "tables": tables, "files": changed, "gone": gone}
        entries = (*since.entries, entry)
        raw = json.dumps({"base": since.base_tables, "entries": entries}).encode("utf-8")
        open_store(uri).write_file(LOG_FILE, raw)
        return RecordedFiles(dict(states), tables, since.base_tables, entries, since.base_bytes, len(raw))
    files = {file: state.stored() for file, state in sorted(states.items())}
    raw = json.dumps({"tables": tables, "files": files}).encode("utf-8")
    open_store(uri).write_file(FILES_FILE, raw)
    open_store(uri).write_file(LOG_FILE, json.dumps({"base": tables, "entries": []}).encode("utf-8"))
    return RecordedFiles(dict(states), tables, tables, (), len(raw), 0)


def _log_full(since: RecordedFiles) -> bool:
    """Whether the next commit writes a whole record: once the log has outgrown its share."""
    return since.log_bytes > max(LOG_MIN_BYTES, math.sqrt(LOG_PER_RECORD * since.base_bytes))


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read a block at a time; OSError where it cannot be read."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()
