"""Command-line options that can also be set from environment variables, as MCP hosts' configs prefer,
and the one rule for printing document text to a terminal.

The options arag-index, arag-mcp and arag-agent share are declared here once. A command reads them from
variables under its own prefix (ARAG_INDEX_, ARAG_MCP_), as docs/indexing.md documents; the index and the
bearer token have one variable for every command.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

TRUE_WORDS = ("1", "true", "yes", "on")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
INDEX_ENV = "ARAG_MCP_INDEX"
AUTH_TOKEN_ENV = "ARAG_MCP_AUTH_TOKEN"
"""The bearer token: what arag-mcp requires of HTTP clients and what arag-agent sends to a --server."""
LOCAL_RAY = "local"
"""The value of `arag-index --ray` given without an address, as Ray reads it: start a Ray on this
machine for the build, even where one runs already (`auto` joins that one)."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 control characters and the bidirectional overrides and isolates, which reorder what follows."""


def terminal_text(text: str, keep: str = "\n\t") -> str:
    """Text from documents (titles, sources, file names, answers) as a terminal may show it: control
    characters other than `keep` escaped as JSON escapes them (ESC as \\u001b, so JSON stays JSON),
    so a document cannot set the window title (OSC), clear the screen (CSI) or hide and reorder what
    follows."""
    return _CONTROL.sub(lambda found: found[0] if found[0] in keep else f"\\u{ord(found[0]):04x}", text)


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


def positive_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {value!r}")
    return seconds


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value!r}")
    return number


@dataclass(frozen=True)
class SharedOption:
    """An option that means the same in every command that has it: one flag, one meaning, one variable
    (`env`, or the command's prefix and the flag)."""

    flag: str
    settings: dict[str, Any] = field(default_factory=dict)
    env: str | None = None

    def add(self, parser: argparse.ArgumentParser, prefix: str, **overrides: Any) -> None:
        """Add it to `parser`; `overrides` are what differs in this command (help, required)."""
        env_option(parser, self.flag, self.env or env_name(prefix, self.flag), **{**self.settings, **overrides})


INDEX = SharedOption("--index", {"metavar": "DIR"}, INDEX_ENV)
LOG_LEVEL = SharedOption(
    "--log-level", {"type": log_level, "choices": LOG_LEVELS, "default": "INFO", "help": "(any case)"}
)
DEVICE = SharedOption(
    "--device", {"default": None, "help": "torch device for embedding, e.g. cpu, cuda, mps (default: cpu)"}
)
THREADS = SharedOption(
    "--threads", {"type": positive_int, "default": None, "help": "CPU threads for embedding (default: up to 4)"}
)

STORE_TIMEOUT = SharedOption(
    "--store-timeout",
    {
        "type": positive_seconds,
        "default": None,
        "metavar": "SECONDS",
        "help": "how long an object store (s3://, gs://, az://) has to answer a read or write, its retries "
        "included, before the call fails saying that the store does not answer (default: 30)",
    },
)


def parse_command(parser: argparse.ArgumentParser, argv: Any) -> argparse.Namespace:
    """`parser`'s arguments, its subcommands listed (its help, exit 2) where none is given, not
    argparse's "the following arguments are required: command"."""
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        parser.exit(2)
    return args


def add_version(parser: argparse.ArgumentParser) -> None:
    try:
        installed = version("arag-mcp")
    except PackageNotFoundError:
        installed = "unknown"
    parser.add_argument("--version", action="version", version=f"{parser.prog} {installed}")
