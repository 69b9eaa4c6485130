"""`naive-rag`: the top-5 chunks of the naive profile's embedding search, then one answer (the paper's Naive RAG)."""

from __future__ import annotations

from arag_mcp.agent import prompts
from arag_mcp.agent.conversation import AgentResult, Conversation
from arag_mcp.agent.loop import LoopLimits

from .errors import WorkflowError

TOOL = "naive_embedding_search"
TOP_K = 5


async def naive_rag(conversation: Conversation, question: str, limits: LoopLimits) -> AgentResult:
    if TOOL not in conversation.tools.offered:
        raise WorkflowError(f"the naive-rag workflow needs the {TOOL} tool; start the server with --profile naive")
    found = await conversation.call_tool(TOOL, {"query": question, "top_k": TOP_K})
    messages = [
        {"role": "system", "content": prompts.NAIVE_SYSTEM},
        {"role": "user", "content": f"Passages:\n{found.text}\n\nQuestion: {question}"},
    ]
    reply = await conversation.chat(messages)
    return conversation.result(question, "naive-rag", reply["content"], [*messages, reply])
