"""`arag-mcp`: serve an index over stdio, SSE or streamable HTTP, or call one tool from a terminal."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from arag_mcp.indexer.command_options import (
    AUTH_TOKEN_ENV,
    DEVICE,
    INDEX,
    LOG_LEVEL,
    STORE_TIMEOUT,
    THREADS,
    add_version,
    env_name,
    env_option,
)
from arag_mcp.indexer.index.keywords import KEYWORD_MATCHES
from arag_mcp.server.tools.profiles import DEFAULT_PROFILE, PROFILES

log = logging.getLogger("arag_mcp.server")

ENV_PREFIX = "ARAG_MCP_"


def _env(flag: str) -> str:
    return env_name(ENV_PREFIX, flag)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="arag-mcp",
        description="Serve an arag-index index to MCP hosts with the A-RAG tools (or another profile's). "
        "Every option but --call can also be set from the environment variable named in its help.",
    )
    add_version(parser)
    INDEX.add(parser, ENV_PREFIX, help="index folder or object-store URI built by arag-index")
    env_option(
        parser,
        "--profile",
        _env("--profile"),
        choices=sorted(PROFILES),
        default=DEFAULT_PROFILE,
        help=f"which tools to offer (default: {DEFAULT_PROFILE}); see --list-profiles",
    )
    parser.add_argument("--list-profiles", action="store_true", help="print each profile with its tools and exit")
    env_option(
        parser,
        "--keyword-match",
        _env("--keyword-match"),
        choices=KEYWORD_MATCHES,
        default="word",
        help="keyword_search matches whole words, ignoring case, accents and width, titles included, ranked "
        "by keyword rarity (BM25) (word, the default), or the A-RAG paper's case-insensitive substrings of the "
        "chunk text, scored count x keyword length (substring)",
    )
    env_option(parser, "--transport", _env("--transport"), choices=("stdio", "sse", "streamable-http"), default="stdio")
    env_option(parser, "--host", _env("--host"), default="127.0.0.1", help="HTTP bind address (default: 127.0.0.1)")
    env_option(parser, "--port", _env("--port"), type=int, default=8000, help="HTTP port (default: 8000)")
    env_option(
        parser,
        "--auth-token",
        AUTH_TOKEN_ENV,
        default=None,
        help="bearer token HTTP clients must send; required off loopback",
    )
    env_option(
        parser,
        "--allowed-host",
        _env("--allowed-hosts"),
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="Host header accepted when binding off loopback (repeatable; the variable takes a comma-separated list)",
    )
    env_option(
        parser,
        "--watch",
        _env("--watch"),
        action="store_true",
        help="keep the index current: run `arag-index watch` on its recorded sources beside the server (where "
        "several servers share the index, one watches and the others follow its commits)",
    )
    DEVICE.add(parser, ENV_PREFIX, help="torch device for query embedding (default: cpu)")
    THREADS.add(parser, ENV_PREFIX)
    LOG_LEVEL.add(parser, ENV_PREFIX)
    STORE_TIMEOUT.add(parser, ENV_PREFIX)
    parser.add_argument(
        "--call",
        nargs="+",
        metavar=("TOOL", "ARG"),
        help="call one tool and print its answer instead of serving; arguments as one JSON object or "
        'key=value pairs, e.g. --call keyword_search keywords=Paris  or  --call chunk_read \'{"chunk_ids": ["..."]}\'',
    )
    args = parser.parse_args(argv)
    if not args.index and not args.list_profiles:
        parser.error("the following arguments are required: --index")
    return args


def list_profiles() -> str:
    return "\n".join(
        f"{name}{' (default)' if name == DEFAULT_PROFILE else ''}: {profile.summary}\n    tools: {', '.join(profile.tool_names)}"
        for name, profile in PROFILES.items()
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list_profiles:
        print(list_profiles())
        return 0
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="arag-mcp %(levelname)s %(message)s")
    from .serving import (
        serve,  # the MCP SDK and the index load after parsing: --help and --list-profiles answer at once
    )

    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
