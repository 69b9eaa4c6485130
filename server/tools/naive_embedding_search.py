"""naive_embedding_search: Naive RAG's one search, chunks ranked by their own vector's similarity to
the query and sent whole, in places the conversation has not seen."""

from __future__ import annotations

from typing import Annotated

from arag_mcp.server import search as searching
from arag_mcp.server.output.chunk_results import SemanticSearchOutput
from arag_mcp.server.output.descriptions import CONVERSATION_NOTE, METADATA_NOTE
from arag_mcp.server.served import served_index
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from .argument_types import ConversationHandle, Offset, Query, ScopeConditions, TopK
from .checks import checked_query, query_vectors, search_call
from .results import vector_search_result
from .tool_spec import ToolSpec

DESCRIPTION = f"""Search the knowledge base by meaning and get whole chunks back.

The query is embedded and compared with one vector per chunk (cosine similarity); the top_k most
similar chunks are returned with their id, title, source, score and complete text. {METADATA_NOTE} Chunks
already sent in this conversation are left out and named in one line, their places going to new
chunks; chunks that do not fit in one answer are named, and chunk_read fetches them. Ask about one
thing at a time, and search again with new words taken from what you read. {CONVERSATION_NOTE}"""


def naive_embedding_search(
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
        call, "naive_embedding_search", searching.naive_search, vector, top_k, offset, True, served.full_text
    )
    return vector_search_result(call, found, "their chunk vector")


TOOL = ToolSpec(
    name="naive_embedding_search",
    title="Embedding search (whole chunks)",
    function=naive_embedding_search,
    description=DESCRIPTION,
    searches=True,
    idempotent=False,
)
