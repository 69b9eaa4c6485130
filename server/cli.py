"""`arag-mcp`: serve an index over stdio, SSE or streamable HTTP, or call one tool from a terminal."""

from __future__ import annotations

import argparse
import json
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
    terminal_text,
)
from arag_mcp.indexer.embedding.settings import limit_cpu_threads
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.keywords import KEYWORD_MATCHES
from arag_mcp.indexer.index.store import set_store_deadline
from arag_mcp.server.tools.profiles import DEFAULT_PROFILE, PROFILES, Profile

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


def parse_call(call: Sequence[str], profile: Profile) -> tuple[str, dict]:
    """Tool name and arguments from `--call TOOL {json}` or `--call TOOL key=value ...`."""
    tool, *rest = call
    if tool not in profile.tool_names:
        raise ValueError(
            f"profile {profile.name!r} has no tool {tool!r}; choose one of {', '.join(profile.tool_names)}"
        )
    if len(rest) == 1 and rest[0].lstrip().startswith("{"):
        try:
            return tool, _json(rest[0])
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"tool arguments are not valid JSON ({exc.msg}); pass an object like '{{\"top_k\": 3}}'"
            ) from None
    arguments: dict = {}
    for item in rest:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"tool argument {item!r} is not key=value; e.g. keywords=Paris top_k=3")
        try:
            arguments[key] = _json(value)
        except json.JSONDecodeError:
            arguments[key] = value
    return tool, arguments


def _json(text: str) -> object:
    """JSON text; a number longer than Python converts is one line naming the limit, not Python's."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # the integer-string conversion limit
        raise ValueError(
            f"a number in the tool arguments has more than {sys.get_int_max_str_digits()} digits; give a shorter one"
        ) from None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list_profiles:
        print(list_profiles())
        return 0
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="arag-mcp %(levelname)s %(message)s")
    if args.transport != "stdio":
        from .http import is_loopback

        if not is_loopback(args.host) and not args.auth_token:
            print(
                f"arag-mcp: error: binding to {args.host} needs a bearer token; pass --auth-token or set {AUTH_TOKEN_ENV}",
                file=sys.stderr,
            )
            return 2
    limit_cpu_threads(args.threads)
    if args.store_timeout:
        set_store_deadline(args.store_timeout)
    from arag_mcp.server.search.live_index import LiveIndex

    from .app import create_server

    try:
        live = LiveIndex(args.index, device=args.device)
        profile = PROFILES[args.profile]
        call = parse_call(args.call, profile) if args.call else None
    except (IndexStoreError, ValueError) as exc:
        print(f"arag-mcp: error: {exc}", file=sys.stderr)
        return 2
    live.start(load_model=call is None)  # a one-shot call loads the model only if it embeds a query
    watcher = None
    if args.watch and call is None:
        from .watching import IndexWatcher

        watcher = IndexWatcher(live.uri, live.look_again, args.threads)
        watcher.start()
    server = create_server(
        live, profile, keyword_match=args.keyword_match, watch_status=watcher.status if watcher else None
    )
    try:
        if call:
            return call_tool(server, *call)
        log.info(
            "serving %s over %s (%s chunks, profile %s)",
            live.uri,
            args.transport,
            live.manifest.counts.chunks,
            profile.name,
        )
        if args.transport == "stdio":
            server.run("stdio")
        else:
            from .http import serve_http

            serve_http(server, args.transport, args.host, args.port, args.auth_token, args.allowed_host, args.log_level)
        return 0
    finally:
        if watcher is not None:
            watcher.close()
        live.close()


def call_tool(server, tool: str, arguments: dict) -> int:  # noqa: ANN001 - AragServer
    """Call one tool through an in-memory MCP client and print its text answer."""
    import anyio
    from mcp import Client

    from .output.chunk_results import without_conversation

    async def run() -> int:
        async with Client(server) as client:
            result = await client.call_tool(tool, arguments)
        text = "\n".join(block.text for block in result.content if getattr(block, "text", None))
        conversation = (result.structured_content or {}).get("conversation")
        print(
            terminal_text(without_conversation(text, conversation)), file=sys.stderr if result.is_error else sys.stdout
        )
        return 1 if result.is_error else 0

    return anyio.run(run)


if __name__ == "__main__":
    sys.exit(main())
