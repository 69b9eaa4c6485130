"""The user's cache folder for arag-mcp: encoders exported from models, encoders of remote indexes."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """$ARAG_MCP_CACHE, else $XDG_CACHE_HOME/arag-mcp, else ~/.cache/arag-mcp."""
    if os.environ.get("ARAG_MCP_CACHE"):
        return Path(os.environ["ARAG_MCP_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arag-mcp"
