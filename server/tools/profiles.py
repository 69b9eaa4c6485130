"""Profiles: the tool sets a server can offer, as the A-RAG paper's configurations and ablations.

A profile names its tools (their modules in server/tools/, by name: a profile is chosen before the
tools' code is imported), the server instructions and the MCP prompt; each tool's module says how it
is described in it (tool_spec.py). `arag` is the paper's A-RAG (Full); `naive` its Naive A-RAG;
`no-keyword`, `no-semantic` and `no-read` its ablations (w/o keyword search, w/o semantic search,
w/o chunk read: the searches return whole chunks and chunk_read is gone). `agentic` offers
AgenticRAG's document tools (search with several queries, find and open inside a document), and
`arag-plus` the A-RAG tools with them.
"""

from __future__ import annotations

from dataclasses import dataclass

from arag_mcp.server.output import descriptions

VARIANTS = {"semantic_search_queries": "semantic_search"}
"""Tools offered under another tool's name: several queries in one semantic_search."""


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    tools: tuple[str, ...]
    """Its tools, each by its module's name in server/tools/."""
    full_text: bool = False
    """Searches send whole chunks instead of snippets."""

    @property
    def tool_names(self) -> list[str]:
        """The names its tools are offered under."""
        return [VARIANTS.get(tool, tool) for tool in self.tools]

    @property
    def prompt_name(self) -> str:
        return "arag" if self.name == "arag" else f"arag-{self.name}"

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
            ("keyword_search", "semantic_search", "chunk_read"),
        ),
        Profile(
            "naive",
            "Naive A-RAG: one embedding search returning whole chunks, and chunk reading",
            ("naive_embedding_search", "chunk_read"),
        ),
        Profile("no-keyword", "A-RAG without keyword search", ("semantic_search", "chunk_read")),
        Profile("no-semantic", "A-RAG without semantic search", ("keyword_search", "chunk_read")),
        Profile(
            "no-read",
            "A-RAG without chunk read: both searches return whole chunks",
            ("keyword_search", "semantic_search"),
            full_text=True,
        ),
        Profile(
            "agentic",
            "AgenticRAG's document tools: search with several queries, find and open inside a document",
            ("search", "find", "open"),
        ),
        Profile(
            "arag-plus",
            "A-RAG with several queries per semantic search, and find and open inside a document",
            ("keyword_search", "semantic_search_queries", "chunk_read", "find", "open"),
        ),
    )
}
DEFAULT_PROFILE = "arag"
