"""Keeping the react loop within its token budget: a warning near the budget, a summary and pruning at it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arag_mcp.agent import prompts

from .conversation import Conversation, message_text
from .model_json import ModelJSONError, arguments, string_list
from .tokens import count_tokens

WARN_FRACTION = 0.9


@dataclass
class ContextBudget:
    """Token accounting of one conversation; tool results are tied to the chunk ids they name.

    `fixed` is what every call sends besides the messages (the tool schemas), so the budget
    covers everything the model is shown.
    """

    budget: int
    fixed: int = 0
    warned: bool = False
    ties: dict[str, set[str]] = field(default_factory=dict)

    def tie(self, tool_call_id: str, chunk_ids: tuple[str, ...]) -> None:
        self.ties[tool_call_id] = set(chunk_ids)

    def used(self, messages: list[dict[str, Any]]) -> int:
        return self.fixed + count_tokens([message_text(message) for message in messages])

    async def manage(self, conversation: Conversation, messages: list[dict[str, Any]]) -> None:
        """Before a model call: warn once at 90% of the budget; at the budget, summarize and prune."""
        used = self.used(messages)
        if used >= self.budget:
            await self.summarize(conversation, messages)
        elif used >= WARN_FRACTION * self.budget and not self.warned:
            self.warned = True
            messages.append({"role": "user", "content": prompts.CONTEXT_WARNING.format(used=used, budget=self.budget)})

    async def summarize(self, conversation: Conversation, messages: list[dict[str, Any]]) -> None:
        """The model records its findings and the references to keep; other tool results are pruned."""
        request = [*messages, {"role": "user", "content": prompts.SUMMARIZE.format(budget=self.budget)}]
        reply = await conversation.chat(
            request,
            tools=[prompts.SUMMARIZE_TOOL],
            tool_choice={"type": "function", "function": {"name": "summarize"}},
        )
        calls = reply.get("tool_calls") or []
        keep, problem = kept_chunk_ids(calls[0]) if calls else (set(), "")
        pruned = self.prune(messages, keep)
        if len(calls) != 1:  # no usable summarize call: keep the model's text as the summary
            messages.append({"role": "assistant", "content": reply.get("content") or ""})
            messages.append({"role": "user", "content": prompts.SUMMARIZED.format(pruned=pruned)})
        else:
            note = prompts.SUMMARIZE_REFUSED if problem else prompts.SUMMARIZED
            messages.append({"role": "assistant", "content": reply.get("content") or "", "tool_calls": calls})
            messages.append(
                {"role": "tool", "tool_call_id": calls[0]["id"], "content": note.format(problem=problem, pruned=pruned)}
            )
        self.warned = False
        if self.used(messages) >= self.budget:  # what was kept still does not fit
            self.prune(messages, set())

    def prune(self, messages: list[dict[str, Any]], keep: set[str]) -> int:
        """Replace the tool results tied to no kept chunk id; returns how many were pruned."""
        pruned = 0
        for message in messages:
            if message["role"] != "tool" or message["content"] == prompts.PRUNED:
                continue
            tied = self.ties.get(message.get("tool_call_id", ""))
            if tied is None or tied & keep:
                continue
            message["content"] = prompts.PRUNED
            pruned += 1
        return pruned


def kept_chunk_ids(call: dict[str, Any]) -> tuple[set[str], str]:
    """The chunk ids a summarize call keeps, or none and what is wrong with its arguments."""
    try:
        given = arguments(call["function"]["arguments"])
        return set(string_list(given.get("keep_chunk_ids", []), "keep_chunk_ids")), ""
    except ModelJSONError as exc:
        return set(), f"the arguments are {exc}"
