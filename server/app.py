"""The MCP layer: a profile's tools, prompt and resources on an MCPServer, whose lifespan yields the
served index (served.py) and whose middleware takes tools' arguments as models send them (arguments.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from arag_mcp.indexer.index.errors import IndexStoreError
from arag_mcp.indexer.index.keywords import KeywordMatch
from arag_mcp.indexer.index.schema import DocumentColumn
from arag_mcp.server.search.conversations import Conversations
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.served import ServedIndex, lifespan_of
from arag_mcp.server.tools import (
    chunk_read,
    find,
    keyword_search,
    naive_embedding_search,
    search,
    semantic_search,
    semantic_search_queries,
)
from arag_mcp.server.tools import open as open_lines
from arag_mcp.server.tools.arguments import ArgumentCheck
from arag_mcp.server.tools.errors import one_line_errors
from arag_mcp.server.tools.profiles import DEFAULT_PROFILE, PROFILES, Profile
from arag_mcp.server.tools.schemas import compact_schema
from arag_mcp.server.tools.tool_spec import ToolSpec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

TOOLS = {
    tool.name: tool
    for tool in (
        keyword_search.TOOL,
        semantic_search.TOOL,
        chunk_read.TOOL,
        naive_embedding_search.TOOL,
        semantic_search_queries.TOOL,
        search.TOOL,
        find.TOOL,
        open_lines.TOOL,
    )
}
"""Every tool a profile can name, by its module's name."""
PRIVATE_MANIFEST_KEYS = frozenset({"sources"})
"""Left out of what models read: the recorded sources are paths on the indexing machine."""


class AragServer(MCPServer[ServedIndex]):
    """MCPServer over one served index, whose health is its object store's (`health`)."""

    def __init__(self, served: ServedIndex, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, lifespan=lifespan_of(served), **kwargs)
        self.served = served

    def health(self) -> tuple[int, dict[str, Any]]:
        """The HTTP status and body of the health check: 503 while the object store holding the index
        does not answer (a load balancer then sends calls elsewhere), 200 otherwise."""
        state = self.served.live.store_state()
        if state is None:
            return 200, {"status": "ok"}
        if state.answering:
            return 200, {"status": "ok", "store": f"the object store at {state.location} answers"}
        return 503, {
            "status": "store unreachable",
            "store": f"the object store at {state.location} does not answer "
            f"(for {state.silent_seconds:.0f} s); calls that read it fail until it does",
        }


def create_server(
    live: LiveIndex,
    profile: Profile = PROFILES[DEFAULT_PROFILE],
    conversations: Conversations | None = None,
    keyword_match: KeywordMatch = "word",
    watch_status: Callable[[], dict[str, str]] | None = None,
) -> AragServer:
    """An MCP server offering `profile`'s tools over `live`, keywords matched as `keyword_match` says;
    `watch_status` says what the watcher keeping the index current is doing (arag-mcp --watch)."""
    if conversations is None:  # not `or`: an empty Conversations is falsy
        conversations = Conversations()
    served = ServedIndex(live, conversations, keyword_match, profile.full_text, watch_status)
    counts = live.manifest.counts
    collection = live.manifest.description
    tools = [
        _offered(TOOLS[tool], name, profile, keyword_match, collection)
        for tool, name in zip(profile.tools, profile.tool_names)
    ]
    server = AragServer(
        served,
        "arag-mcp",
        title="A-RAG retrieval",
        instructions=f"{profile.instructions(collection)}\n\nIndex: {counts.documents} documents, "
        f"{counts.chunks} chunks. Profile: {profile.name}.",
        version=_version(),
        tools=tools,
        middleware=[ArgumentCheck({tool.name: tool for tool in tools})],
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
            snapshot = served.live.snapshot()
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
                "watcher": served.watch_status() if served.watch_status else {"state": "not watched by this server"},
                **shown,
            },
            indent=2,
            sort_keys=True,
        )

    @server.resource("arag://documents", name="documents", title="Documents in the index", mime_type="application/json")
    def documents() -> str:
        from arag_mcp.indexer.index.snapshot import list_documents  # LanceDB is imported after the handshake

        try:
            listed = list_documents(served.live.uri, served.live.snapshot().manifest)
        except IndexStoreError as exc:
            raise ResourceError(str(exc)) from None
        shown = [{key: value for key, value in row.items() if key != DocumentColumn.ID} for row in listed]
        return json.dumps({"documents": len(shown), "list": shown}, indent=2)

    return server


def _offered(spec: ToolSpec, name: str, profile: Profile, keyword_match: KeywordMatch, collection: str) -> Tool:
    """`spec`'s tool as `profile` offers it under `name`: its failures one line each (errors.py), its
    schemas listed compact (schemas.py), and no argument taken that its listing does not name."""
    tool = Tool.from_function(
        one_line_errors(name, spec.function),
        name=name,
        title=spec.title,
        description=spec.described(profile, keyword_match, collection),
        annotations=ToolAnnotations(
            read_only_hint=True, idempotent_hint=spec.idempotent_in(profile), open_world_hint=False
        ),
    )
    tool.parameters = {**compact_schema(tool.parameters), "additionalProperties": False}
    tool.fn_metadata.arg_model = _closed(tool.fn_metadata.arg_model)
    if tool.fn_metadata.output_schema is not None:
        tool.fn_metadata.output_schema = compact_schema(tool.fn_metadata.output_schema, descriptions=False)
    return tool


def _closed(model: type[BaseModel]) -> type[BaseModel]:
    """`model` refusing arguments it does not name, as its listed schema says (additionalProperties)."""
    return type(model.__name__, (model,), {"model_config": ConfigDict(extra="forbid"), "__module__": model.__module__})


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arag-mcp")
    except PackageNotFoundError:
        return "0"
