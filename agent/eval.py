"""`arag-eval run`: a workflow over a dataset's questions, one JSONL trace line per question, resumable."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from .llm import ChatModel, ModelConfig, Usage
from .loop import LoopLimits
from .mcp_tools import ServerTarget, connect
from .metrics import judge, score, summarize
from .traces import append_trace, resume_traces
from .workflows import answer

log = logging.getLogger("arag_mcp.agent")

TRACES = "traces.jsonl"
SUMMARY = "summary.json"
RUN = "run.json"


class EvalError(Exception):
    """The dataset or the output folder cannot be used (one line, with the fix)."""


@dataclass(frozen=True)
class EvalOptions:
    dataset: Path
    out: Path
    target: ServerTarget
    agent: ModelConfig
    judge: ModelConfig
    workflow: str = "react"
    limits: LoopLimits = LoopLimits()
    limit: int | None = None
    concurrency: int = 1

    def identity(self) -> dict[str, Any]:
        """What must not change between the runs that fill one output folder."""
        return {
            "dataset": str(self.dataset.resolve()),
            "index": self.target.index and str(self.target.index),
            "server": self.target.url,
            "profile": self.target.profile,
            "workflow": self.workflow,
            "model": self.agent.model,
            "judge": self.judge.model,
            "limits": asdict(self.limits),
        }


def load_questions(dataset: Path) -> list[dict[str, Any]]:
    """questions.jsonl of a bench-data folder: {"id", "question", "answers": [gold, aliases...]} a line."""
    path = dataset / "questions.jsonl"
    if not path.is_file():
        raise EvalError(f"no questions.jsonl in {dataset}; pass a folder laid out like bench-data/musique")
    questions = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                assert isinstance(record["question"], str) and record["answers"] and isinstance(record["answers"], list)
            except (json.JSONDecodeError, KeyError, TypeError, AssertionError):
                raise EvalError(
                    f'{path} line {number} is not a question record; each line needs "question" and a non-empty "answers" list'
                ) from None
            questions.append({"id": str(record.get("id", number)), **record})
    return questions


def prepare_out(options: EvalOptions) -> None:
    options.out.mkdir(parents=True, exist_ok=True)
    run_file = options.out / RUN
    identity = options.identity()
    if run_file.is_file():
        before = json.loads(run_file.read_text(encoding="utf-8"))
        changed = [key for key in identity if before.get(key) != identity[key]]
        if changed:
            raise EvalError(
                f"{options.out} holds a run with another {', '.join(changed)}; pass a new --out to start a separate run"
            )
    else:
        run_file.write_text(json.dumps(identity, indent=2) + "\n", encoding="utf-8")


async def run_eval(options: EvalOptions) -> dict[str, Any]:
    """Answer and judge every question not yet in the traces, then summarise all the run's questions."""
    questions = load_questions(options.dataset)[: options.limit]
    prepare_out(options)
    traces = options.out / TRACES
    done = resume_traces(traces)
    pending = [question for question in questions if question["id"] not in done]
    log.info(
        "%d of %d questions done before; answering %d", len(questions) - len(pending), len(questions), len(pending)
    )
    agent, judge_model = ChatModel(options.agent), ChatModel(options.judge)
    write_lock = anyio.Lock()
    queue = iter(pending)
    try:
        if pending:
            async with connect(options.target) as tools:

                async def worker() -> None:
                    for item in queue:
                        result = await answer(options.workflow, tools, agent, item["question"], options.limits)
                        record = {"id": item["id"], "answers": item["answers"], **result.to_dict()}
                        record.update(score(record["answer"], item["answers"]))
                        usage = Usage()
                        record["llm_correct"], record["judge_reply"] = (
                            await judge(judge_model, usage, item["question"], item["answers"][0], record["answer"])
                            if record["answered"]
                            else (False, "")
                        )
                        record["judge_calls"] = usage.calls
                        async with write_lock:
                            append_trace(traces, record)
                        done[item["id"]] = record
                        log.info(
                            "%d/%d %s: %s, %d tool calls, %.1f s",
                            len(done),
                            len(questions),
                            item["id"],
                            "correct" if record["llm_correct"] else "incorrect" if record["answered"] else "no answer",
                            len(record["tool_calls"]),
                            record["seconds"],
                        )

                async with anyio.create_task_group() as group:
                    for _ in range(max(1, options.concurrency)):
                        group.start_soon(worker)
    finally:
        await agent.close()
        await judge_model.close()
    summary = {**options.identity(), **summarize([done[question["id"]] for question in questions])}
    (options.out / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


ROWS = (
    ("questions", "questions"),
    ("answered", "answered"),
    ("llm_acc", "LLM-Acc % (answered)"),
    ("llm_acc_all", "LLM-Acc % (all)"),
    ("contain_acc", "Contain-Acc % (answered)"),
    ("contain_acc_all", "Contain-Acc % (all)"),
    ("contain_acc_alias", "Contain-Acc % with aliases (answered)"),
    ("contain_acc_alias_all", "Contain-Acc % with aliases (all)"),
    ("retrieved_tokens", "retrieved tokens / question"),
    ("tool_calls", "tool calls / question"),
    ("llm_calls", "model calls / question"),
    ("prompt_tokens", "prompt tokens / question"),
    ("completion_tokens", "completion tokens / question"),
    ("judge_calls", "judge calls"),
    ("seconds", "seconds / question"),
)


def table(summaries: list[dict[str, Any]], names: list[str]) -> str:
    """Runs side by side: one column per run, one row per figure."""
    label_width = max(len(label) for _, label in ROWS)
    widths = [max(12, len(name)) for name in names]
    lines = ["".ljust(label_width) + "  " + "  ".join(name.rjust(w) for name, w in zip(names, widths))]
    for key, label in ROWS:
        cells = ["-" if summary.get(key) is None else str(summary[key]) for summary in summaries]
        lines.append(label.ljust(label_width) + "  " + "  ".join(c.rjust(w) for c, w in zip(cells, widths)))
    return "\n".join(lines)


def load_summary(run: Path) -> dict[str, Any]:
    path = run / SUMMARY if run.is_dir() else run
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        raise EvalError(f"no readable {SUMMARY} at {path}; pass run folders written by arag-eval run") from None
