"""semantic_search: chunks ranked by their best sentence's similarity to one query, in places the
conversation has not seen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from arag_mcp.server import search as searching
from arag_mcp.server.output.chunk_results import SemanticSearchOutput
from arag_mcp.server.output.descriptions import FULL_TEXT_AFTER, SNIPPET_AFTER
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from .argument_types import ConversationHandle, Offset, Query, ScopeConditions, TopK
from .checks import checked_query, query_vectors, search_call
from .results import vector_search_result
from .tool_spec import ToolSpec

if TYPE_CHECKING:
    from arag_mcp.indexer.index.keywords import KeywordMatch

    from .profiles import Profile

DESCRIPTION = """Find chunks by meaning: the query is compared with every sentence; a chunk ranks by its best
one. For descriptions and paraphrases{fallback}. Ask one thing at a time ("Who directed
Inception?", then "Where was Nolan born?").

{after}"""


def description(profile: Profile, keyword_match: KeywordMatch) -> str:
    return DESCRIPTION.format(
        fallback=", or when keyword_search finds nothing" if "keyword_search" in profile.tool_names else "",
        after=FULL_TEXT_AFTER if profile.full_text else SNIPPET_AFTER,
    )


def semantic_search(
    ctx: Context,
    query: Query,
    top_k: TopK = 5,
    scope: ScopeConditions = None,
    offset: Offset = 0,
    conversation: ConversationHandle = None,
) -> Annotated[CallToolResult, SemanticSearchOutput]:
    served = served_index(ctx)
    query = checked_query(query)
    call = search_call(served, scope, conversation)
    vector = query_vectors(served, call.snapshot, [query])[0]
    found = searching.vector_results_for(
        call, "semantic_search", searching.semantic_search, vector, top_k, offset, False, served.full_text
    )
    return vector_search_result(call, found, "their best sentence")


TOOL = ToolSpec(
    name="semantic_search",
    title="Semantic search",
    function=semantic_search,
    description=description,
    searches=True,
)
