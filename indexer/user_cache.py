"""The user's cache folder for arag-mcp: encoders exported from models, encoders of remote indexes."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def cache_root() -> Path:
    """$ARAG_MCP_CACHE, else $XDG_CACHE_HOME/arag-mcp, else ~/.cache/arag-mcp."""
    if os.environ.get("ARAG_MCP_CACHE"):
        return Path(os.environ["ARAG_MCP_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arag-mcp"


@contextmanager
def new_cache_folder(target: Path, marker: str) -> Iterator[Path]:
    """A work folder beside `target` to fill, renamed to `target` when the block ends without error:
    a cache folder is whole or absent, whatever stops its writer. `marker`, the file written last,
    tells a folder another process made first, which is kept."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        yield work
        try:
            work.rename(target)
        except OSError:  # another process made the same folder first
            if not (target / marker).exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
