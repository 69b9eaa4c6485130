"""`ma-rag`: a planner splits the question into steps; per step a definer writes the sub-query, our tools
retrieve, an extractor keeps the relevant evidence and a QA agent answers it; a final QA agent answers
the question from the plan's history (MA-RAG's roles, over A-RAG tools)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arag_mcp.agent import prompts
from arag_mcp.agent.conversation import AgentResult, Conversation
from arag_mcp.agent.loop import LoopLimits
from arag_mcp.agent.model_json import ModelJSONError, NotJSON, loads, string_list

from .errors import WorkflowError

SEARCH_TOOLS = ("semantic_search", "naive_embedding_search")
TOP_K = 5
CHUNKS_READ_PER_STEP = 3


@dataclass
class Step:
    description: str
    query: str = ""
    evidence: str = ""
    answer: str = ""


async def ma_rag(conversation: Conversation, question: str, limits: LoopLimits) -> AgentResult:
    offered = conversation.tools.offered
    search = next((name for name in SEARCH_TOOLS if name in offered), None)
    if search is None:
        raise WorkflowError(
            f"the ma-rag workflow needs one of {', '.join(SEARCH_TOOLS)}; this server offers {', '.join(offered) or 'none'}"
        )
    log: list[dict[str, Any]] = []

    async def ask(agent: str, system: str, user: str) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        reply = await conversation.chat(messages)
        log.append({"agent": agent, "messages": messages, "reply": reply["content"]})
        return reply["content"].strip()

    plan, problem = parse_plan(await ask("planner", prompts.PLANNER, question))
    if problem:
        log[-1]["error"] = f"{problem}; the question is the plan's one step"
    plan = plan[: limits.max_iterations] or [question]
    steps = [Step(description) for description in plan]
    for step in steps:
        step.query = (
            await ask("step_definer", prompts.STEP_DEFINER, describe(question, steps, step)) or step.description
        )
        found = await conversation.call_tool(search, {"query": step.query, "top_k": TOP_K})
        passages = found.text
        unread = [cid for cid in found.chunk_ids if cid not in conversation.read][:CHUNKS_READ_PER_STEP]
        if search == "semantic_search" and "chunk_read" in offered and unread:
            passages = (await conversation.call_tool("chunk_read", {"chunk_ids": unread})).text
        step.evidence = await ask("extractor", prompts.EXTRACTOR, f"Step: {step.query}\n\nPassages:\n{passages}")
        step.answer = await ask("step_qa", prompts.STEP_QA, f"Step: {step.query}\n\nEvidence:\n{step.evidence}")
    answer = await ask("final_qa", prompts.FINAL_QA, describe(question, steps, None))
    return conversation.result(question, "ma-rag", answer, log)


def parse_plan(text: str) -> tuple[list[str], str]:
    """The planner's steps: its JSON list of strings, else its numbered or bulleted lines. A JSON
    list that is not one of strings (or is nested too deep) gives no steps and the problem."""
    start, end = text.find("["), text.rfind("]")
    if start != -1 and end > start:
        try:
            steps = string_list(loads(text[start : end + 1]), "its list")
            return [step.strip() for step in steps if step.strip()], ""
        except NotJSON:
            pass
        except ModelJSONError as exc:
            return [], f"the plan is {exc}"
    lines = (line.strip().lstrip("-*0123456789.) ").strip() for line in text.splitlines())
    return [line for line in lines if line], ""


def describe(question: str, steps: list[Step], current: Step | None) -> str:
    """The question, the plan and the answers so far, as the step definer and the final QA agent read them."""
    lines = [f"Question: {question}", "", "Plan:"]
    lines += [f"{number}. {step.description}" for number, step in enumerate(steps, 1)]
    done = [step for step in steps if step.answer]
    if done:
        lines += ["", "Answers so far:"]
        lines += [f"- {step.query}: {step.answer}" for step in done]
    if current is not None:
        lines += ["", f"Current step: {current.description}"]
    return "\n".join(lines)
