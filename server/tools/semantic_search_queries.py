"""semantic_search with several queries (offered as semantic_search: profiles.VARIANTS): each query's
best chunks by their best sentence, merged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from arag_mcp.server import search as searching
from arag_mcp.server.output.chunk_results import SemanticSearchOutput, semantic_output, semantic_text
from arag_mcp.server.output.descriptions import CONVERSATION_NOTE, METADATA_NOTE, SNIPPET_AFTER
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from .argument_types import ConversationHandle, Queries, ScopeConditions, TopK
from .checks import checked_queries, query_vectors, search_call
from .results import search_result
from .tool_spec import ToolSpec

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordMatch

    from .profiles import Profile

DESCRIPTION = """Search the knowledge base by meaning with 1 to 5 queries at once: each query is embedded and
compared with every sentence of the corpus (cosine similarity); chunks are ranked by their best
sentence, each query's top_k results are merged, and a chunk found by several queries appears
once, with its best score and the queries that found it.

Returns chunk ids with title, source, best score and the chunk's sentences that matched. {metadata}
Give several phrasings of one need (or its parts) in one call instead of one call each{fallback}.

{after} {conversation}"""
DOCUMENT_TOOLS_AFTER = " To read around a match in a long document, use find and open with its chunk id."


def description(profile: Profile, keyword_match: KeywordMatch) -> str:
    tools = profile.tool_names
    return DESCRIPTION.format(
        fallback="; use it when keyword_search finds nothing" if "keyword_search" in tools else "",
        after=SNIPPET_AFTER + DOCUMENT_TOOLS_AFTER if "find" in tools else SNIPPET_AFTER,
        metadata=METADATA_NOTE,
        conversation=CONVERSATION_NOTE,
    )


def semantic_search_queries(
    ctx: Context,
    queries: Queries,
    top_k: TopK = 5,
    scope: ScopeConditions = None,
    conversation: ConversationHandle = None,
) -> Annotated[CallToolResult, SemanticSearchOutput]:
    served = served_index(ctx)
    checked = checked_queries(queries)
    call = search_call(served, scope, conversation)
    found = searching.merged_results_for(call, "semantic_search", query_vectors(served, call.snapshot, checked), top_k)
    hits = [merged.hit for merged in found.merged]
    ranked_by = f"their best sentence over {len(checked)} {'query' if len(checked) == 1 else 'queries'}"
    output = semantic_output(hits, call.current.handle, call.current.notice, None, found.snippets, ranked_by)
    for result, merged in zip(output.results, found.merged):
        result.queries = merged.queries
    return search_result(call, output, semantic_text)


TOOL = ToolSpec(
    name="semantic_search_queries",
    title="Semantic search (several queries)",
    function=semantic_search_queries,
    description=description,
    searches=True,
)
