"""Command-line options that can also be set from environment variables, as MCP hosts' configs prefer."""

from __future__ import annotations

import argparse
import os
from importlib.metadata import PackageNotFoundError, version
from typing import Any

TRUE_WORDS = ("1", "true", "yes", "on")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def env_name(prefix: str, flag: str) -> str:
    """The variable that sets `flag`: `--write-batch` under ARAG_INDEX_ is ARAG_INDEX_WRITE_BATCH."""
    return prefix + flag.removeprefix("--").replace("-", "_").upper()


def env_option(parser: argparse.ArgumentParser, flag: str, env: str, **kwargs: Any) -> None:
    """Add `flag`; where the variable `env` is set, it gives the default (a repeatable option takes
    a comma-separated list, a switch one of 1/true/yes/on), and `--help` names the variable."""
    value = os.environ.get(env)
    action = kwargs.get("action")
    if value not in (None, ""):
        if action == "store_true":
            kwargs["default"] = value.strip().lower() in TRUE_WORDS
        elif action == "append":
            kwargs["default"] = [item.strip() for item in value.split(",") if item.strip()]
        else:
            kwargs["default"] = _converted(parser, flag, env, value, kwargs)
        kwargs["required"] = False
    kwargs["help"] = f"{kwargs.get('help', '')} [env: {env}]".strip()
    parser.add_argument(flag, **kwargs)


def _converted(parser: argparse.ArgumentParser, flag: str, env: str, value: str, kwargs: dict[str, Any]) -> Any:
    """The variable's value as the option would take it; a bad one is a usage error naming the variable."""
    try:
        converted = kwargs.get("type", str)(value)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        parser.error(f"{env}={value!r} is not a valid {flag}: {exc}")
    choices = kwargs.get("choices")
    if choices is not None and converted not in choices:
        parser.error(f"{env}={value!r} is not a valid {flag}; choose one of {', '.join(map(str, choices))}")
    return converted


def log_level(value: str) -> str:
    """Log levels are accepted in any case."""
    return value.strip().upper()


def add_version(parser: argparse.ArgumentParser) -> None:
    try:
        installed = version("arag-mcp")
    except PackageNotFoundError:
        installed = "unknown"
    parser.add_argument("--version", action="version", version=f"{parser.prog} {installed}")
