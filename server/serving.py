"""Serving an index once `arag-mcp`'s arguments are parsed (cli.py): open it, start the watcher
beside it where asked, and run the transport, or call one tool and print its answer."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

import anyio
from arag_mcp.indexer.command_options import AUTH_TOKEN_ENV, terminal_text
from arag_mcp.indexer.embedding.settings import limit_cpu_threads
from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.store import set_store_deadline
from mcp import Client

from .app import AragServer, create_server
from .http import is_loopback, serve_http
from .output.chunk_results import without_conversation
from .search.live_index import LiveIndex
from .tools.profiles import PROFILES, Profile
from .watching import IndexWatcher

log = logging.getLogger("arag_mcp.server")


def serve(args: argparse.Namespace) -> int:
    """Serve the index `args` name (or answer its --call), until the transport ends; the exit status."""
    if args.transport != "stdio":
        if not is_loopback(args.host) and not args.auth_token:
            print(
                f"arag-mcp: error: binding to {args.host} needs a bearer token; pass --auth-token or set {AUTH_TOKEN_ENV}",
                file=sys.stderr,
            )
            return 2
    limit_cpu_threads(args.threads)
    if args.store_timeout:
        set_store_deadline(args.store_timeout)
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
            serve_http(server, args.transport, args.host, args.port, args.auth_token, args.allowed_host, args.log_level)
        return 0
    finally:
        if watcher is not None:
            watcher.close()
        live.close()


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


def call_tool(server: AragServer, tool: str, arguments: dict) -> int:
    """Call one tool through an in-memory MCP client and print its text answer."""

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
