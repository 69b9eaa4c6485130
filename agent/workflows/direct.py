"""`direct`: the model answers from its own knowledge, without retrieval (the no-retrieval baseline)."""

from __future__ import annotations

from .. import prompts
from ..conversation import AgentResult, Conversation
from ..loop import LoopLimits


async def direct(conversation: Conversation, question: str, limits: LoopLimits) -> AgentResult:
    messages = [{"role": "system", "content": prompts.DIRECT_SYSTEM}, {"role": "user", "content": question}]
    reply = await conversation.chat(messages)
    return conversation.result(question, "direct", reply["content"], [*messages, reply])
