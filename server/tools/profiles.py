"""Profiles: the tool sets a server can offer, as the A-RAG paper's configurations and ablations.

A profile names its tools (methods of `Toolkit`, by name: a profile is chosen before the tools'
code is imported), how each is described, the server instructions and the MCP prompt. `arag` is the paper's A-RAG (Full); `naive` its Naive A-RAG;
`no-keyword`, `no-semantic` and `no-read` its ablations (w/o keyword search, w/o semantic search,
w/o chunk read: the searches return whole chunks and chunk_read is gone). `agentic` offers
AgenticRAG's document tools (search with several queries, find and open inside a document), and
`arag-plus` the A-RAG tools with them.
"""

from __future__ import annotations

from dataclasses import dataclass

from arag_mcp.server.output import descriptions


@dataclass(frozen=True)
class Tool:
    method: str
    """The name of the Toolkit method that implements it; the tool's name unless `renamed`."""
    title: str
    renamed: str | None = None
    """The name a variant is offered under (several queries in one semantic_search)."""

    @property
    def name(self) -> str:
        return self.renamed or self.method


KEYWORD_SEARCH = Tool("keyword_search", "Keyword search")
SEMANTIC_SEARCH = Tool("semantic_search", "Semantic search")
CHUNK_READ = Tool("chunk_read", "Read chunks")
NAIVE_EMBEDDING_SEARCH = Tool("naive_embedding_search", "Embedding search (whole chunks)")
SEMANTIC_SEARCH_QUERIES = Tool("semantic_search_queries", "Semantic search (several queries)", "semantic_search")
SEARCH = Tool("search", "Search")
FIND = Tool("find", "Find in a document")
OPEN = Tool("open", "Open document lines")
SEARCHES = (KEYWORD_SEARCH, SEMANTIC_SEARCH, NAIVE_EMBEDDING_SEARCH, SEMANTIC_SEARCH_QUERIES, SEARCH)
DESCRIPTIONS = {
    SEARCH: descriptions.SEARCH,
    FIND: descriptions.FIND,
    OPEN: descriptions.OPEN,
    CHUNK_READ: descriptions.CHUNK_READ,
    NAIVE_EMBEDDING_SEARCH: descriptions.NAIVE_EMBEDDING_SEARCH,
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

    def description(self, tool: Tool, keyword_match: str = "word", collection: str = "") -> str:
        """The tool's description; a search tool's starts with what it searches (`collection`), so
        that a host running several servers can tell their tools apart."""
        names = self.tool_names
        if tool is KEYWORD_SEARCH:
            text = descriptions.keyword_search_description(names, self.full_text, keyword_match)
        elif tool is SEMANTIC_SEARCH:
            text = descriptions.semantic_search_description(names, self.full_text)
        elif tool is SEMANTIC_SEARCH_QUERIES:
            text = descriptions.semantic_search_queries_description(names)
        else:
            text = DESCRIPTIONS[tool]
        return f"{descriptions.searches(collection)}\n\n{text}" if collection and tool in SEARCHES else text

    def idempotent(self, tool: Tool) -> bool:
        """Whether calling the tool again answers the same: not for reads (and searches that send
        whole chunks), whose repeat says "read before". Every tool only reads, within the index."""
        return not (tool in (CHUNK_READ, NAIVE_EMBEDDING_SEARCH, FIND, OPEN) or self.full_text)

    def instructions(self, collection: str = "") -> str:
        return descriptions.instructions(self.tool_names, self.full_text, collection)

    @property
    def system_prompt(self) -> str:
        return descriptions.system_prompt(self.tool_names, self.full_text)


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
