"""What the model reads when a tool call fails: one line that names the problem and the fix.

A failure the server foresaw keeps its own message; an unusable index says which table and how to
rebuild it (the index reader's IndexStoreError); anything else is logged with its traceback on the
server and reaches the model as one line without the exception's text, which can carry internal
paths (LanceDB's messages name Rust source files and data files). An error quotes what it
refuses through `quoted` (search/limits.py), so that a huge argument is not sent back whole.
"""

from __future__ import annotations

import logging

from arag_mcp.indexer.index.errors import IndexStoreError
from mcp.server.mcpserver.exceptions import ToolError

log = logging.getLogger(__name__)


def tool_error(tool: str, failure: ToolError) -> ToolError:
    """The one-line error for a failed call of `tool`; `failure` is what the SDK raised, with the
    original exception as its cause."""
    cause = failure.__cause__
    if isinstance(cause, ToolError):
        return cause
    if isinstance(cause, IndexStoreError):
        return ToolError(str(cause))
    if cause is None:
        return failure
    return unexpected_error(tool, cause)


def unexpected_error(tool: str, cause: BaseException) -> ToolError:
    """The one line for a failure nobody foresaw: the exception's type, never its text, which is
    logged with its traceback on the server."""
    log.error("%s failed", tool, exc_info=cause)
    return ToolError(
        f"{tool} failed on the server ({type(cause).__name__}; its log has the details); retry, or use another tool"
    )
