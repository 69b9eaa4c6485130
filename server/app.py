"""The MCP layer: registers the three A-RAG tools over a LiveIndex and keeps per-session read sets."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from arag_mcp.indexer.manifest import IndexStoreError
from arag_mcp.indexer.terms import words_of
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from . import retrieval, texts
from .errors import tool_error
from .live_index import LiveIndex, ModelNotReady
from .results import (
    ChunkReadOutput,
    ChunkResult,
    KeywordSearchOutput,
    SemanticSearchOutput,
    chunk_read_text,
    chunk_result,
    keyword_output,
    keyword_text,
    semantic_output,
    semantic_text,
)
from .sessions import ReadSets, new_handle

MAX_TOP_K = 20
MAX_KEYWORDS = 20
MAX_KEYWORD_WORDS = 8
MAX_KEYWORD_CHARS = 200
MAX_KEYWORD_PIECES = 16
"""Word pieces (runs of letters and digits) per keyword: a phrase's cost grows with its pieces."""
MAX_QUERY_CHARS = 2000
MAX_CHUNK_IDS = 20
MAX_READ_CHARS = 40_000
MODEL_WAIT_SECONDS = 45.0

ARGUMENT_HINTS = {
    "keywords": 'keywords must be a list of short terms, e.g. ["Marie Curie", "1911"]',
    "query": "query must be a non-empty question or description",
    "top_k": f"top_k must be a whole number from 1 to {MAX_TOP_K}",
    "chunk_ids": 'chunk_ids must be a list of chunk ids from the search results, e.g. ["k3j9x2abq7-0"]',
    "session": "session must be the handle string a previous result gave",
}
LIST_ARGUMENTS = {"keywords", "chunk_ids"}
ARGUMENT_ALIASES = {
    "keyword": "keywords",
    "terms": "keywords",
    "question": "query",
    "chunk_id": "chunk_ids",
    "ids": "chunk_ids",
    "k": "top_k",
    "limit": "top_k",
}

TopK = Annotated[int, Field(ge=1, le=MAX_TOP_K, description=f"number of chunks to return (1-{MAX_TOP_K})")]
Session = Annotated[str | None, Field(description="session handle from an earlier result, if one was given")]
SEARCH_ANNOTATIONS = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
READ_ANNOTATIONS = ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=False)


class AragServer(MCPServer):
    """MCPServer whose argument errors are one actionable line, with common slips coerced."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        try:
            return await super().call_tool(name, coerce_arguments(arguments), context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(describe_invalid(exc.__cause__)) from None
            raise tool_error(name, exc) from None


def coerce_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Accept common aliases, and a single string where a list is expected."""
    coerced = {ARGUMENT_ALIASES.get(key, key): value for key, value in arguments.items()}
    for key in LIST_ARGUMENTS:
        if isinstance(coerced.get(key), str):
            coerced[key] = [coerced[key]]
    return coerced


def describe_invalid(error: ValidationError) -> str:
    """One line naming each bad argument, what was given and what is expected."""
    parts = []
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else "arguments"
        hint = ARGUMENT_HINTS.get(field, f"{field}: {item['msg']}")
        given = "nothing" if item["type"] == "missing" else f"{json.dumps(item.get('input'), default=str)[:60]}"
        parts.append(f"{hint}; got {given}")
    return "; ".join(dict.fromkeys(parts))


def check_keyword_sizes(terms: list[str]) -> None:
    """Keywords are short terms: a sentence, a pasted document or a long punctuated string gets a
    tool error before any work is done, since a keyword's cost grows with its length and pieces."""
    for term in terms:
        shown = f"{term[:40]!r}..."
        if len(term) > MAX_KEYWORD_CHARS:
            raise ToolError(
                f"keywords must be short terms; got one of {len(term)} characters ({shown}); "
                f"keep each under {MAX_KEYWORD_CHARS}, or use semantic_search"
            )
        if len(term.split()) > MAX_KEYWORD_WORDS:
            raise ToolError(
                f"keywords must be short terms; got a {len(term.split())}-word sentence "
                f"({shown}); split it into names and terms, or use semantic_search"
            )
    for term, pieces in zip(terms, words_of([term.lower() for term in terms])):
        if len(pieces) > MAX_KEYWORD_PIECES:
            raise ToolError(
                f"keywords must be short terms; got one of {len(pieces)} words and numbers between "
                f"punctuation ({term[:40]!r}...); pass at most {MAX_KEYWORD_PIECES} per keyword"
            )


def session_key(ctx: Context, transport: str, handle: str | None) -> tuple[str, str | None]:
    """(read-set key, handle to show the model) for this request.

    Stable transport sessions are used as they are: the process on stdio, the SSE stream's
    session_id, a legacy streamable-HTTP mcp-session-id. Where the protocol keeps no session
    (2026-07-28 over streamable HTTP), an explicit handle is issued and must be passed back.
    """
    if handle:
        return f"handle:{handle}", handle
    if transport == "stdio":
        return "stdio", None
    request = ctx.request_context.request
    stream = getattr(request, "query_params", {}).get("session_id") if request is not None else None
    if stream:
        return f"sse:{stream}", None
    header = (ctx.headers or {}).get("mcp-session-id")
    if header:
        return f"http:{header}", None
    issued = new_handle()
    return f"handle:{issued}", issued


def current(live: LiveIndex):  # noqa: ANN201 - IndexSnapshot, imported lazily
    """The served snapshot, or a tool error saying why there is none."""
    try:
        return live.snapshot()
    except IndexStoreError as exc:
        raise ToolError(str(exc)) from None


def structured(model: BaseModel, render: Callable[[Any], str]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=render(model))], structured_content=model.model_dump())


def create_server(live: LiveIndex, transport: str = "stdio", read_sets: ReadSets | None = None) -> AragServer:
    """An MCP server exposing keyword_search, semantic_search and chunk_read over `live`."""
    read_sets = read_sets or ReadSets()
    counts = live.manifest["counts"]
    server = AragServer(
        "arag-mcp",
        title="A-RAG retrieval",
        instructions=f"{texts.INSTRUCTIONS}\n\nIndex: {counts['documents']} documents, {counts['chunks']} chunks.",
        version=_version(),
    )

    @server.tool(title="Keyword search", description=texts.KEYWORD_SEARCH, annotations=SEARCH_ANNOTATIONS)
    def keyword_search(
        keywords: Annotated[
            list[str], Field(description="short specific terms, matched literally and case-insensitively")
        ],
        ctx: Context,
        top_k: TopK = 5,
        session: Session = None,
    ) -> Annotated[CallToolResult, KeywordSearchOutput]:
        terms = [k.strip() for k in keywords if k.strip()]
        if not terms:
            raise ToolError('keywords is empty; give one or more short terms, e.g. ["Marie Curie"]')
        if len(terms) > MAX_KEYWORDS:
            raise ToolError(f"{len(terms)} keywords given; pass at most {MAX_KEYWORDS}, the most specific first")
        check_keyword_sizes(terms)
        _, handle = session_key(ctx, transport, session)
        hits = retrieval.keyword_search(current(live), terms, top_k)
        return structured(keyword_output(hits, terms, handle), keyword_text)

    @server.tool(title="Semantic search", description=texts.SEMANTIC_SEARCH, annotations=SEARCH_ANNOTATIONS)
    def semantic_search(
        query: Annotated[str, Field(description="a question or description of what to find")],
        ctx: Context,
        top_k: TopK = 5,
        session: Session = None,
    ) -> Annotated[CallToolResult, SemanticSearchOutput]:
        query = query.strip()
        if not query:
            raise ToolError('query is empty; describe what to find, e.g. "where was Marie Curie born"')
        if len(query) > MAX_QUERY_CHARS:
            raise ToolError(
                f"query has {len(query)} characters; keep it under {MAX_QUERY_CHARS} (one sub-question at a time)"
            )
        _, handle = session_key(ctx, transport, session)
        snapshot = current(live)
        try:
            vector = live.query_vector(snapshot, query, MODEL_WAIT_SECONDS)
        except ModelNotReady as exc:
            raise ToolError(str(exc)) from None
        hits = retrieval.semantic_search(snapshot, vector, top_k)
        return structured(semantic_output(hits, handle), semantic_text)

    @server.tool(title="Read chunks", description=texts.CHUNK_READ, annotations=READ_ANNOTATIONS)
    def chunk_read(
        chunk_ids: Annotated[list[str], Field(description="chunk ids from the search results")],
        ctx: Context,
        session: Session = None,
    ) -> Annotated[CallToolResult, ChunkReadOutput]:
        wanted = list(dict.fromkeys(cid.strip() for cid in chunk_ids if cid.strip()))
        if not wanted:
            raise ToolError("chunk_ids is empty; pass ids from keyword_search or semantic_search results")
        if len(wanted) > MAX_CHUNK_IDS:
            raise ToolError(
                f"chunk_ids holds {len(wanted)} ids; read at most {MAX_CHUNK_IDS} per call, the most promising first"
            )
        key, handle = session_key(ctx, transport, session)
        return structured(read_with_dedup(live, read_sets, key, wanted, handle), chunk_read_text)

    @server.prompt(
        name="arag", title="A-RAG agent", description="The A-RAG agent system prompt, optionally with a question"
    )
    def arag_prompt(question: str = "") -> str:
        return f"{texts.SYSTEM_PROMPT}\n\nQuestion: {question}" if question else texts.SYSTEM_PROMPT

    @server.resource("arag://index", name="index", title="Index manifest", mime_type="application/json")
    def index_manifest() -> str:
        snapshot = current(live)
        return json.dumps({"index": snapshot.uri, **snapshot.manifest}, indent=2, sort_keys=True)

    return server


def read_with_dedup(
    live: LiveIndex, read_sets: ReadSets, key: str, wanted: list[str], handle: str | None
) -> ChunkReadOutput:
    """Chunks in the order asked; re-reads marked, unknown ids named, the rest bounded in size."""
    read_before = read_sets.read_before(key, wanted)
    found = retrieval.read_chunks(current(live), [cid for cid in wanted if cid not in read_before])
    results: list[ChunkResult] = []
    sent: list[str] = []
    size = 0
    for cid in wanted:
        chunk = found.get(cid)
        if cid in read_before:
            results.append(ChunkResult(chunk_id=cid, status="read_before"))
        elif chunk is None:
            results.append(ChunkResult(chunk_id=cid, status="not_found"))
        elif sent and size + len(chunk.text) > MAX_READ_CHARS:
            results.append(ChunkResult(chunk_id=cid, status="not_sent"))
        else:
            results.append(chunk_result(chunk))
            sent.append(cid)
            size += len(chunk.text)
    read_sets.mark_read(key, sent)
    not_sent = [r.chunk_id for r in results if r.status == "not_sent"]
    message = f"Not sent (size limit): {not_sent}; call chunk_read again with them." if not_sent else ""
    return ChunkReadOutput(message=message, session=handle, chunks=results)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arag-mcp")
    except PackageNotFoundError:
        return "0"
