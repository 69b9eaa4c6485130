"""Profiles: the tool sets a server can offer, as the A-RAG paper's configurations and ablations.

A profile names its tools (methods of `Toolkit`), how each is described, the server
instructions and the MCP prompt. `arag` is the paper's A-RAG (Full); `naive` its Naive A-RAG;
`no-keyword`, `no-semantic` and `no-read` its ablations (w/o keyword search, w/o semantic search,
w/o chunk read: the searches return whole chunks and chunk_read is gone). `agentic` offers
AgenticRAG's document tools (search with several queries, find and open inside a document), and
`arag-plus` the A-RAG tools with them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mcp_types import ToolAnnotations

from . import texts
from .tools import Toolkit

SEARCH_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
READ = ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=False)
"""Reads (and searches that send whole chunks) are not idempotent: a repeat says "read before"."""


@dataclass(frozen=True)
class Tool:
    function: Callable
    """The Toolkit method that implements it; its name is the tool's name unless `renamed`."""
    title: str
    renamed: str | None = None
    """The name a variant is offered under (several queries in one semantic_search)."""

    @property
    def name(self) -> str:
        return self.renamed or self.function.__name__


KEYWORD_SEARCH = Tool(Toolkit.keyword_search, "Keyword search")
SEMANTIC_SEARCH = Tool(Toolkit.semantic_search, "Semantic search")
CHUNK_READ = Tool(Toolkit.chunk_read, "Read chunks")
NAIVE_EMBEDDING_SEARCH = Tool(Toolkit.naive_embedding_search, "Embedding search (whole chunks)")
SEMANTIC_SEARCH_QUERIES = Tool(Toolkit.semantic_search_queries, "Semantic search (several queries)", "semantic_search")
SEARCH = Tool(Toolkit.search, "Search")
FIND = Tool(Toolkit.find, "Find in a document")
OPEN = Tool(Toolkit.open, "Open document lines")
DESCRIPTIONS = {
    SEARCH: texts.SEARCH,
    FIND: texts.FIND,
    OPEN: texts.OPEN,
    CHUNK_READ: texts.CHUNK_READ,
    NAIVE_EMBEDDING_SEARCH: texts.NAIVE_EMBEDDING_SEARCH,
}


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    tools: tuple[Tool, ...]
    full_text: bool = False
    """Searches send whole chunks instead of snippets."""

    @property
    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    @property
    def prompt_name(self) -> str:
        return "arag" if self.name == "arag" else f"arag-{self.name}"

    def description(self, tool: Tool, keyword_match: str = "word") -> str:
        names = self.tool_names
        if tool is KEYWORD_SEARCH:
            return texts.keyword_search_description(names, self.full_text, keyword_match)
        if tool is SEMANTIC_SEARCH:
            return texts.semantic_search_description(names, self.full_text)
        if tool is SEMANTIC_SEARCH_QUERIES:
            return texts.semantic_search_queries_description(names)
        return DESCRIPTIONS[tool]

    def annotations(self, tool: Tool) -> ToolAnnotations:
        sends_text = tool in (CHUNK_READ, NAIVE_EMBEDDING_SEARCH, FIND, OPEN) or self.full_text
        return READ if sends_text else SEARCH_ONLY

    @property
    def instructions(self) -> str:
        return texts.instructions(self.tool_names, self.full_text)

    @property
    def system_prompt(self) -> str:
        return texts.system_prompt(self.tool_names, self.full_text)


PROFILES = {
    profile.name: profile
    for profile in (
        Profile(
            "arag",
            "A-RAG (Full): keyword and semantic search with snippets, and chunk reading",
            (KEYWORD_SEARCH, SEMANTIC_SEARCH, CHUNK_READ),
        ),
        Profile(
            "naive",
            "Naive A-RAG: one embedding search returning whole chunks, and chunk reading",
            (NAIVE_EMBEDDING_SEARCH, CHUNK_READ),
        ),
        Profile("no-keyword", "A-RAG without keyword search", (SEMANTIC_SEARCH, CHUNK_READ)),
        Profile("no-semantic", "A-RAG without semantic search", (KEYWORD_SEARCH, CHUNK_READ)),
        Profile(
            "no-read",
            "A-RAG without chunk read: both searches return whole chunks",
            (KEYWORD_SEARCH, SEMANTIC_SEARCH),
            full_text=True,
        ),
        Profile(
            "agentic",
            "AgenticRAG's document tools: search with several queries, find and open inside a document",
            (SEARCH, FIND, OPEN),
        ),
        Profile(
            "arag-plus",
            "A-RAG with several queries per semantic search, and find and open inside a document",
            (KEYWORD_SEARCH, SEMANTIC_SEARCH_QUERIES, CHUNK_READ, FIND, OPEN),
        ),
    )
}
DEFAULT_PROFILE = "arag"
