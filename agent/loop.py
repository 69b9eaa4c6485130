"""The A-RAG agent loop (the paper's Algorithm 1): tools until an answer or the iteration limit, then a forced answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from arag_mcp.agent import prompts

from .context import ContextBudget
from .conversation import AgentResult, Conversation
from .tokens import count_tokens

MAX_ITERATIONS = 15
TOKEN_BUDGET = 128_000


@dataclass(frozen=True)
class LoopLimits:
    max_iterations: int = MAX_ITERATIONS
    token_budget: int = TOKEN_BUDGET


async def react(conversation: Conversation, question: str, limits: LoopLimits) -> AgentResult:
    """Each iteration is one model call; its tool calls run through MCP and their text goes back to the model."""
    tools = conversation.tools.schemas()
    context = ContextBudget(limits.token_budget, fixed=count_tokens([json.dumps(tools)]))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompts.AGENT_SYSTEM},
        {"role": "user", "content": question},
    ]
    for _ in range(limits.max_iterations):
        await context.manage(conversation, messages)
        reply = await conversation.chat(messages, tools=tools)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return conversation.result(question, "react", reply["content"], messages)
        for call in reply["tool_calls"]:
            outcome = await conversation.call_tool(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": outcome.text})
            context.tie(call["id"], outcome.chunk_ids)
    await context.manage(conversation, messages)
    messages.append({"role": "user", "content": prompts.FINAL_ANSWER})
    reply = await conversation.chat(messages)
    messages.append(reply)
    return conversation.result(question, "react", reply["content"], messages)
