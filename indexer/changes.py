"""Which source files a command reads: decided from their size and modification time, and where
those changed, their content hash, against what the index recorded when it last read them
(index/file_states.py). An unchanged file is not opened."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arag_mcp.indexer.index.file_states import FileState, file_sha256
from arag_mcp.indexer.sources.document import SkippedFile
from arag_mcp.indexer.sources.files import Source, display_name, file_key, is_included
from arag_mcp.indexer.sources.formats import UNSUPPORTED, may_read


@dataclass(frozen=True)
class FileToRead:
    path: Path
    source: Source
    file: str
    """Its resolved path, as its documents record it."""
    size: int
    mtime_ns: int
    sha256: str
    """"" where its bytes could not be read (reading it reports why; nothing is recorded for it)."""


@dataclass
class Changes:
    """What the listed files' metadata says: the files to read and the states the others keep."""

    read: list[FileToRead] = field(default_factory=list)
    unchanged: dict[str, FileState] = field(default_factory=dict)
    """file → state of each listed file that is not read (its metadata refreshed where only that changed)."""
    refreshed: int = 0
    """Files whose size or time changed but not their content: recorded anew, not read."""
    gone: list[str] = field(default_factory=list)
    """Recorded files under the paths synced that are no longer listed."""
    skipped_before: list[SkippedFile] = field(default_factory=list)
    """What unchanged files had skipped when they were read, reported then."""


def plan_changes(
    listed: Iterable[tuple[Path, Source]],
    states: dict[str, FileState],
    synced: Sequence[Path],
    read_again: bool = False,
) -> Changes:
    """Compare each listed file with its recorded state; recorded files under `synced` that were
    not listed are gone. `read_again`: the files were read by other readers (READERS_VERSION), so
    every file is read, changed or not."""
    changes = Changes()
    seen: set[str] = set()
    for path, source in listed:
        file = file_key(path)
        if file in seen:  # sources that overlap list it twice
            continue
        seen.add(file)
        state = states.get(file)
        try:
            status = os.stat(path)
        except OSError:
            changes.read.append(FileToRead(path, source, file, 0, 0, ""))
            continue
        if not stat.S_ISREG(status.st_mode):  # read_file says why it is skipped; hashing a FIFO would block
            changes.read.append(FileToRead(path, source, file, 0, 0, ""))
            continue
        if state is not None and (read_again or _now_read(state, path, source)):
            state = None
        if state is not None and state.same_metadata(status.st_size, status.st_mtime_ns):
            _keep(changes, path, source, file, state)
            continue
        digest = content_sha256(path)
        if state is not None and digest and digest == state.sha256:
            changes.refreshed += 1
            _keep(
                changes,
                path,
                source,
                file,
                FileState(status.st_size, status.st_mtime_ns, digest, state.documents, state.skipped),
            )
            continue
        changes.read.append(FileToRead(path, source, file, status.st_size, status.st_mtime_ns, digest))
    prefixes = tuple(path.as_posix().rstrip("/") + "/" for path in synced)
    targets = {path.as_posix() for path in synced}
    changes.gone = [file for file in states if file not in seen and (file in targets or file.startswith(prefixes))]
    return changes


def _now_read(state: FileState, path: Path, source: Source) -> bool:
    """Whether a file skipped as of an unsupported type is now one a reader reads (this version
    reads its format, or the source includes it): it is read again, though unchanged."""
    return any(reason.startswith(UNSUPPORTED) for reason in state.skipped) and may_read(
        path.name, is_included(path, source)
    )


def _keep(changes: Changes, path: Path, source: Source, file: str, state: FileState) -> None:
    changes.unchanged[file] = state
    if state.skipped:
        shown = display_name(path, source.root)
        changes.skipped_before.extend(SkippedFile(shown, reason, file) for reason in state.skipped)


def content_sha256(path: Path) -> str:
    """The SHA-256 of the file's bytes; "" where they cannot be read."""
    try:
        return file_sha256(path)
    except OSError:
        return ""
