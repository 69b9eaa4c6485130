"""One question's exchange with the model and the tools, and the record it leaves (calls, tokens, time)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from .llm import ChatModel, Usage
from .mcp_tools import ToolConversation, ToolOutcome
from .model_json import ModelJSONError, arguments
from .tokens import count_tokens


@dataclass
class ToolCallRecord:
    name: str
    arguments: dict[str, Any] | str
    is_error: bool
    retrieved_tokens: int


@dataclass
class AgentResult:
    """What a workflow answered and what it cost; one JSONL trace line of an evaluation."""

    question: str
    workflow: str
    answer: str
    cited: list[str]
    read: list[str]
    tool_calls: list[ToolCallRecord]
    retrieved_tokens: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    messages: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Conversation:
    """The model and this question's conversation with the server; every call is counted here, whatever the workflow."""

    model: ChatModel
    tools: ToolConversation
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    named: dict[str, None] = field(default_factory=dict)
    read: dict[str, None] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    async def chat(self, messages: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
        return await self.model.reply(messages, self.usage, **options)

    async def call_tool(self, name: str, given: str | dict[str, Any]) -> ToolOutcome:
        """Run one tool call; malformed arguments come back as a tool error for the model to correct."""
        parsed: dict[str, Any] | None = None
        try:
            parsed = arguments(given) if isinstance(given, str) else given
        except ModelJSONError as exc:
            outcome = ToolOutcome(
                f"Error: the arguments are {exc}; call {name} again with a JSON object of its parameters", True
            )
        else:
            outcome = await self.tools.call(name, parsed)
        tokens = count_tokens([outcome.text])
        self.tool_calls.append(ToolCallRecord(name, parsed if parsed is not None else given, outcome.is_error, tokens))
        self.named.update(dict.fromkeys(outcome.chunk_ids))
        self.read.update(dict.fromkeys(outcome.read_ids))
        return outcome

    def result(self, question: str, workflow: str, answer: str, messages: list[dict[str, Any]]) -> AgentResult:
        return AgentResult(
            question=question,
            workflow=workflow,
            answer=answer.strip(),
            cited=[chunk_id for chunk_id in self.named if chunk_id in answer],
            read=list(self.read),
            tool_calls=self.tool_calls,
            retrieved_tokens=sum(call.retrieved_tokens for call in self.tool_calls),
            llm_calls=self.usage.calls,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            seconds=round(time.monotonic() - self.started, 3),
            messages=messages,
        )


def message_text(message: dict[str, Any]) -> str:
    """Everything in a message that occupies the model's context."""
    calls = message.get("tool_calls") or []
    return (message.get("content") or "") + "".join(
        call["function"]["name"] + (call["function"]["arguments"] or "") for call in calls
    )


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
