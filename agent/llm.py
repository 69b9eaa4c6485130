"""The chat-completions endpoint: configuration from flags or environment, and one call with its usage."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import openai

MODEL_ENV = "ARAG_AGENT_MODEL"
JUDGE_MODEL_ENV = "ARAG_JUDGE_MODEL"
JUDGE_BASE_URL_ENV = "ARAG_JUDGE_BASE_URL"
JUDGE_API_KEY_ENV = "ARAG_JUDGE_API_KEY"
REQUEST_TIMEOUT_SECONDS = 300.0


class EndpointError(Exception):
    """The model endpoint is misconfigured, unreachable or refused a request (one line, with the fix)."""


@dataclass(frozen=True)
class ModelConfig:
    model: str
    base_url: str | None
    api_key: str
    temperature: float | None = None


def model_config(
    model: str | None, base_url: str | None, api_key: str | None, temperature: float | None = None
) -> ModelConfig:
    """The agent's endpoint: flags first, then OPENAI_BASE_URL, OPENAI_API_KEY and ARAG_AGENT_MODEL."""
    model = model or os.environ.get(MODEL_ENV)
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    if not model:
        raise EndpointError(f"no model named; pass --model or set {MODEL_ENV} (e.g. gpt-5-mini, Qwen/Qwen3-8B)")
    if not api_key:
        if not base_url:
            raise EndpointError("no endpoint configured; set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server")
        api_key = "unused"  # local servers (vLLM, Ollama) accept any key
    return ModelConfig(model, base_url, api_key, temperature)


def judge_config(agent: ModelConfig, model: str | None = None) -> ModelConfig:
    """The judge's endpoint: its own ARAG_JUDGE_* settings where given, else the agent's."""
    return ModelConfig(
        model=model or os.environ.get(JUDGE_MODEL_ENV) or agent.model,
        base_url=os.environ.get(JUDGE_BASE_URL_ENV) or agent.base_url,
        api_key=os.environ.get(JUDGE_API_KEY_ENV) or agent.api_key,
        temperature=agent.temperature,
    )


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class ChatModel:
    """One endpoint and model; every reply is a plain assistant message dict ready to append."""

    config: ModelConfig
    client: openai.AsyncOpenAI = field(init=False)

    def __post_init__(self) -> None:
        self.client = openai.AsyncOpenAI(
            base_url=self.config.base_url, api_key=self.config.api_key, timeout=REQUEST_TIMEOUT_SECONDS
        )

    async def reply(
        self,
        messages: list[dict[str, Any]],
        usage: Usage,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        temperature: float | None = None,
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if tools:
            options["tools"] = tools
            if tool_choice:
                options["tool_choice"] = tool_choice
        temperature = self.config.temperature if temperature is None else temperature
        if temperature is not None:
            options["temperature"] = temperature
        try:
            completion = await self.client.chat.completions.create(
                model=self.config.model, messages=messages, **options
            )
        except openai.APIConnectionError:
            raise EndpointError(
                f"cannot reach the model endpoint at {self.client.base_url}; check OPENAI_BASE_URL and that the server runs"
            ) from None
        except openai.APIStatusError as exc:
            raise EndpointError(
                f"the model endpoint answered {exc.status_code}: {_first_line(exc.message)}; check the model name and key"
            ) from None
        if not completion.choices:
            raise EndpointError(f"the model endpoint returned no choices for model {self.config.model!r}")
        usage.calls += 1
        if completion.usage is not None:
            usage.prompt_tokens += completion.usage.prompt_tokens or 0
            usage.completion_tokens += completion.usage.completion_tokens or 0
        message = completion.choices[0].message
        reply: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
        if message.tool_calls:
            reply["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments or ""},
                }
                for call in message.tool_calls
                if getattr(call, "function", None) is not None
            ]
        return reply

    async def close(self) -> None:
        await self.client.close()


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0][:200] if (text or "").strip() else "no message"
