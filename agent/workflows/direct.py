"""`direct`: the model answers from its own knowledge, without retrieval (the no-retrieval baseline)."""

from __future__ import annotations

from arag_mcp.agent import prompts
from arag_mcp.agent.conversation import AgentResult, Conversation
from arag_mcp.agent.loop import LoopLimits


async def direct(conversation: Conversation, question: str, limits: LoopLimits) -> AgentResult:
    messages = [{"role": "system", "content": prompts.DIRECT_SYSTEM}, {"role": "user", "content": question}]
    reply = await conversation.chat(messages)
    return conversation.result(question, "direct", reply["content"], [*messages, reply])
