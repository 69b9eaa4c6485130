"""The server's tools through MCP: connecting, showing them to the model, and calling them for one question."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Tool

CONVERSATION_ARGUMENT = "conversation"
ENDPOINT_KEYS = ("OPENAI_API_KEY", "ARAG_JUDGE_API_KEY")


@dataclass(frozen=True)
class ServerTarget:
    """Where the tools live: an index served by a stdio subprocess we start, or a running server's URL."""

    index: str | None = None
    url: str | None = None
    profile: str | None = None
    token: str | None = None

    async def client(self, stack: AsyncExitStack) -> Client:
        """A client whose resources `stack` releases; a bearer token goes with every HTTP request."""
        if self.url and self.token:
            headers = {"Authorization": f"Bearer {self.token}"}
            http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
            return Client(streamable_http_client(self.url, http_client=http))
        if self.url:
            return Client(self.url)
        return Client(self.stdio_parameters())

    def stdio_parameters(self) -> StdioServerParameters:
        """`arag-mcp --index ...` in this Python, with the caller's environment (object-store credentials,
        caches, offline settings) but without the model endpoint's keys, which the server has no use for."""
        args = ["-m", "arag_mcp.server", "--index", str(self.index), "--log-level", "WARNING"]
        if self.profile:
            args += ["--profile", self.profile]
        environment = {key: value for key, value in os.environ.items() if key not in ENDPOINT_KEYS}
        return StdioServerParameters(command=sys.executable, args=args, env=environment)


@dataclass(frozen=True)
class ToolOutcome:
    """What a call gave: the text the model reads, and the chunk ids its structured content names."""

    text: str
    is_error: bool
    chunk_ids: tuple[str, ...] = ()
    read_ids: tuple[str, ...] = ()


@dataclass
class ServerTools:
    """An open MCP connection and the tools it offers; calls go through a `ToolSession` per question."""

    client: Client
    offered: dict[str, Tool] = field(default_factory=dict)

    def conversation(self) -> ToolConversation:
        return ToolConversation(self)


@asynccontextmanager
async def connect(target: ServerTarget) -> AsyncIterator[ServerTools]:
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(await target.client(stack))
        listing = await client.list_tools()
        yield ServerTools(client, {tool.name: tool for tool in listing.tools})


def model_schema(tool: Tool) -> dict[str, Any]:
    parameters = copy.deepcopy(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
    parameters.get("properties", {}).pop(CONVERSATION_ARGUMENT, None)
    if CONVERSATION_ARGUMENT in parameters.get("required", []):
        parameters["required"] = [name for name in parameters["required"] if name != CONVERSATION_ARGUMENT]
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or tool.title or tool.name,
            "parameters": parameters,
        },
    }


@dataclass
class ToolConversation:
    """One question's conversation with the server: the conversation handle of its first result goes with every later call."""

    server: ServerTools
    handle: str | None = None

    @property
    def offered(self) -> dict[str, Tool]:
        return self.server.offered

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas of the tools, without the `conversation` argument (the agent adds it)."""
        return [model_schema(tool) for tool in self.offered.values()]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if name not in self.offered:
            offered = ", ".join(self.offered) or "none"
            return ToolOutcome(f"Error: there is no tool named {name!r}; the tools are: {offered}", True)
        arguments = {key: value for key, value in arguments.items() if key != CONVERSATION_ARGUMENT}
        if self.handle:
            arguments[CONVERSATION_ARGUMENT] = self.handle
        try:
            result = await self.server.client.call_tool(name, arguments)
        except MCPError as exc:
            return ToolOutcome(f"Error: {exc}", True)
        text = "\n".join(block.text for block in result.content if getattr(block, "text", None))
        structured = result.structured_content or {}
        handle = structured.get(CONVERSATION_ARGUMENT)
        if isinstance(handle, str) and handle:
            self.handle = handle
        return ToolOutcome(text, bool(result.is_error), *named_chunks(structured))


def named_chunks(structured: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every chunk id a result names, the ids whose full text it carries: a chunk's text, or a search
    result marked whole). The document tools name chunks as `ref`: in each search result, and once
    for what find and open show of a document."""
    named: list[str] = [structured["ref"]] if isinstance(structured.get("ref"), str) else []
    read: list[str] = []
    for key in ("results", "chunks"):
        for item in structured.get(key) or []:
            cid = item.get("chunk_id") or item.get("ref") if isinstance(item, dict) else None
            if isinstance(cid, str):
                named.append(cid)
                if (item.get("text") or item.get("whole_chunk")) and item.get("status", "ok") == "ok":
                    read.append(cid)
    return tuple(dict.fromkeys(named)), tuple(dict.fromkeys(read))
