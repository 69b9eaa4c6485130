"""What the model reads when a tool call fails: one line that names the problem and the fix.

A failure the server foresaw keeps its own message; an unusable index says which table and how to
rebuild it (the index reader's IndexStoreError); anything else is logged with its traceback on the
server and reaches the model as one line without the exception's text, which can carry internal
paths (LanceDB's messages name Rust source files and data files). An error quotes what it
refuses through `quoted` (search/limits.py), so that a huge argument is not sent back whole.
Arguments a tool cannot take are refused before it runs (arguments.py).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec

from arag_mcp.indexer.index.errors import IndexStoreError
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

log = logging.getLogger(__name__)
Arguments = ParamSpec("Arguments")


def one_line_errors(tool: str, function: Callable[Arguments, CallToolResult]) -> Callable[Arguments, CallToolResult]:
    """`function` (the tool offered as `tool`) answering its failures as results of one line: a
    foreseen one (ToolError) and an unusable index in their own words, anything else in
    `unexpected_error`'s. Its signature is the function's (`functools.wraps`), which the SDK reads."""

    @functools.wraps(function)
    def answered(*args: Arguments.args, **kwargs: Arguments.kwargs) -> CallToolResult:
        try:
            return function(*args, **kwargs)
        except (ToolError, IndexStoreError) as exc:
            return error_result(str(exc))
        except Exception as exc:  # an argument no check foresaw: the model gets our line, not the exception's text
            return error_result(unexpected_error(tool, exc))

    return answered


def error_result(line: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=line)], is_error=True)


def unexpected_error(tool: str, cause: BaseException) -> str:
    """The one line for a failure nobody foresaw: the exception's type, never its text, which is
    logged with its traceback on the server."""
    log.error("%s failed", tool, exc_info=cause)
    return f"{tool} failed on the server ({type(cause).__name__}; its log has the details); retry, or use another tool"
