"""The agent's console scripts: a one-line error, not a traceback, where the `agent` extra is missing."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence


def _run(command: str, function: str, argv: Sequence[str] | None) -> int:
    if importlib.util.find_spec("openai") is None:
        print(
            f"{command}: the agent needs the OpenAI client; install it with pip install 'arag-mcp[agent]'",
            file=sys.stderr,
        )
        return 2
    return getattr(importlib.import_module("arag_mcp.agent.cli"), function)(argv)


def agent_main(argv: Sequence[str] | None = None) -> int:
    return _run("arag-agent", "agent_main", argv)


def eval_main(argv: Sequence[str] | None = None) -> int:
    return _run("arag-eval", "eval_main", argv)
