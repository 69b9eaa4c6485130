"""Scoring as the A-RAG paper's evaluation does: Contain-Acc, LLM-Acc (a judge model), and the run's costs.

Both accuracies are given over answered questions (the paper's denominator: an empty answer leaves
it) and over all questions.
"""

from __future__ import annotations

import re
import string
from statistics import mean
from typing import Any

from arag_mcp.agent import prompts

from .llm import ChatModel, Usage

ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = ARTICLES.sub(" ", text)
    return " ".join(text.split())


def contains(answer: str, gold: str) -> bool:
    """Contain-match: the normalised gold answer is a substring of the normalised answer."""
    gold = normalize_answer(gold)
    return bool(gold) and gold in normalize_answer(answer)


def answered(answer: str) -> bool:
    return bool(answer.strip())


def parse_verdict(reply: str) -> bool:
    """The judge's reply as a verdict; anything but a clear "correct" counts as incorrect."""
    words = re.findall(r"[a-z]+", reply.lower())
    return "correct" in words and "incorrect" not in words


async def judge(model: ChatModel, usage: Usage, question: str, gold: str, answer: str) -> tuple[bool, str]:
    """(verdict, the judge's raw reply) for one answered question."""
    prompt = prompts.JUDGE.format(question=question, gold=gold, answer=answer)
    reply = await model.reply([{"role": "user", "content": prompt}], usage)
    return parse_verdict(reply["content"]), reply["content"]


def score(answer: str, answers: list[str]) -> dict[str, bool]:
    """Contain-match against the gold answer (answers[0]) and against any accepted alias."""
    return {
        "answered": answered(answer),
        "contain": contains(answer, answers[0]),
        "contain_alias": any(contains(answer, gold) for gold in answers),
    }


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's table row: accuracies in percent, costs per question on average."""
    total = len(records)
    done = [record for record in records if record["answered"]]

    def rate(key: str, over: list[dict[str, Any]]) -> float | None:
        return round(100 * sum(bool(record[key]) for record in over) / len(over), 1) if over else None

    def average(key: str) -> float | None:
        return round(mean(record[key] for record in records), 1) if records else None

    return {
        "questions": total,
        "answered": len(done),
        "llm_acc": rate("llm_correct", done),
        "llm_acc_all": rate("llm_correct", records),
        "contain_acc": rate("contain", done),
        "contain_acc_all": rate("contain", records),
        "contain_acc_alias": rate("contain_alias", done),
        "contain_acc_alias_all": rate("contain_alias", records),
        "retrieved_tokens": average("retrieved_tokens"),
        "tool_calls": round(mean(len(record["tool_calls"]) for record in records), 2) if records else None,
        "llm_calls": average("llm_calls"),
        "prompt_tokens": average("prompt_tokens"),
        "completion_tokens": average("completion_tokens"),
        "judge_calls": sum(record.get("judge_calls", 0) for record in records),
        "seconds": round(mean(record["seconds"] for record in records), 2) if records else None,
    }
