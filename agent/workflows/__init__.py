"""The workflows `--workflow` names: each answers one question through a Conversation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from arag_mcp.agent.conversation import AgentResult, Conversation
from arag_mcp.agent.llm import ChatModel
from arag_mcp.agent.loop import LoopLimits, react
from arag_mcp.agent.mcp_tools import ServerTools

from .direct import direct
from .ma_rag import ma_rag
from .naive_rag import naive_rag

Workflow = Callable[[Conversation, str, LoopLimits], Awaitable[AgentResult]]

WORKFLOWS: dict[str, Workflow] = {"react": react, "naive-rag": naive_rag, "direct": direct, "ma-rag": ma_rag}


async def answer(workflow: str, tools: ServerTools, model: ChatModel, question: str, limits: LoopLimits) -> AgentResult:
    """Answer one question in a conversation of its own (a fresh conversation handle, fresh counts)."""
    return await WORKFLOWS[workflow](Conversation(model, tools.conversation()), question, limits)
