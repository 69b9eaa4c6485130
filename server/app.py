"""The MCP layer: a profile's tools, prompt and resources registered on an MCPServer."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.keywords import KeywordMatch
from arag_mcp.indexer.index.schema import DocumentColumn
from arag_mcp.server.search.conversations import Conversations
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.arguments import coerce_arguments, describe_invalid, unknown_arguments
from arag_mcp.server.tools.errors import tool_error, unexpected_error
from arag_mcp.server.tools.profiles import DEFAULT_PROFILE, PROFILES, Profile
from arag_mcp.server.tools.schemas import compact_schema
from arag_mcp.server.tools.toolkit import Toolkit
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ToolAnnotations
from pydantic import ValidationError

PRIVATE_MANIFEST_KEYS = frozenset({"sources"})
"""Left out of what models read: the recorded sources are paths on the indexing machine."""


class AragServer(MCPServer):
    """MCPServer whose argument errors are one actionable line, with common slips coerced and
    arguments a tool does not take refused, and whose health is the object store's (`health`)."""

    def __init__(self, live: LiveIndex, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.live = live

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, **options: Any) -> None:
        """A tool whose listed schema admits no other arguments (`call_tool` refuses them), its
        schemas listed compact (schemas.py)."""
        super().add_tool(fn, name=name, **options)
        tool = self._tool_manager.get_tool(name or fn.__name__)
        tool.parameters = {**compact_schema(tool.parameters), "additionalProperties": False}
        if tool.fn_metadata.output_schema is not None:
            tool.fn_metadata.output_schema = compact_schema(tool.fn_metadata.output_schema, descriptions=False)

    def health(self) -> tuple[int, dict[str, Any]]:
        """The HTTP status and body of the health check: 503 while the object store holding the index
        does not answer (a load balancer then sends calls elsewhere), 200 otherwise."""
        state = self.live.store_state()
        if state is None:
            return 200, {"status": "ok"}
        if state.answering:
            return 200, {"status": "ok", "store": f"the object store at {state.location} answers"}
        return 503, {
            "status": "store unreachable",
            "store": f"the object store at {state.location} does not answer "
            f"(for {state.silent_seconds:.0f} s); calls that read it fail until it does",
        }

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        properties = tool.parameters.get("properties", {}) if tool else {}
        coerced = coerce_arguments(arguments, set(properties))
        unknown = [key for key in coerced if key not in properties]
        if tool is not None and unknown:
            raise ToolError(unknown_arguments(name, unknown, properties))
        try:
            return await super().call_tool(name, coerced, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(describe_invalid(exc.__cause__, properties)) from None
            raise tool_error(name, exc) from None
        except Exception as exc:  # an argument no check foresaw: the model gets our line, not the exception's text
            raise unexpected_error(name, exc) from None


def create_server(
    live: LiveIndex,
    profile: Profile = PROFILES[DEFAULT_PROFILE],
    conversations: Conversations | None = None,
    keyword_match: KeywordMatch = "word",
    watch_status: Callable[[], dict[str, str]] | None = None,
) -> AragServer:
    """An MCP server offering `profile`'s tools over `live`, keywords matched as `keyword_match` says;
    `watch_status` says what the watcher keeping the index current is doing (arag-mcp --watch)."""
    counts = live.manifest.counts
    collection = live.manifest.description
    server = AragServer(
        live,
        "arag-mcp",
        title="A-RAG retrieval",
        instructions=f"{profile.instructions(collection)}\n\nIndex: {counts.documents} documents, "
        f"{counts.chunks} chunks. Profile: {profile.name}.",
        version=_version(),
    )
    if conversations is None:  # not `or`: an empty Conversations is falsy
        conversations = Conversations()
    toolkit = Toolkit(live, conversations, profile.full_text, keyword_match)
    for tool in profile.tools:
        server.add_tool(
            getattr(toolkit, tool.method),
            name=tool.name,
            title=tool.title,
            description=profile.description(tool, keyword_match, collection),
            annotations=ToolAnnotations(
                read_only_hint=True, idempotent_hint=profile.idempotent(tool), open_world_hint=False
            ),
        )

    @server.prompt(
        name=profile.prompt_name,
        title=f"A-RAG agent ({profile.name})",
        description="The agent system prompt for this server's tools, optionally with a question",
    )
    def system_prompt(question: str = "") -> str:
        return f"{profile.system_prompt}\n\nQuestion: {question}" if question else profile.system_prompt

    @server.resource("arag://index", name="index", title="Index manifest", mime_type="application/json")
    def index_manifest() -> str:
        try:
            snapshot = live.snapshot()
        except IndexStoreError as exc:
            raise ResourceError(str(exc)) from None
        shown = {key: value for key, value in snapshot.manifest.to_dict().items() if key not in PRIVATE_MANIFEST_KEYS}
        return json.dumps(
            {
                "index": snapshot.uri,
                "collection": snapshot.manifest.description,
                "profile": profile.name,
                "tools": profile.tool_names,
                "last_changed": snapshot.manifest.built_at,
                "watcher": watch_status() if watch_status else {"state": "not watched by this server"},
                **shown,
            },
            indent=2,
            sort_keys=True,
        )

    @server.resource("arag://documents", name="documents", title="Documents in the index", mime_type="application/json")
    def documents() -> str:
        from arag_mcp.indexer.index.snapshot import list_documents  # LanceDB is imported after the handshake

        try:
            listed = list_documents(live.uri, live.snapshot().manifest)
        except IndexStoreError as exc:
            raise ResourceError(str(exc)) from None
        shown = [{key: value for key, value in row.items() if key != DocumentColumn.ID} for row in listed]
        return json.dumps({"documents": len(shown), "list": shown}, indent=2)

    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arag-mcp")
    except PackageNotFoundError:
        return "0"
