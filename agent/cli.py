"""`arag-agent ask` answers one question; `arag-eval run|compare` evaluates a workflow over a dataset."""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import httpx2
from arag_mcp.agent.workflows.errors import WorkflowError
from arag_mcp.indexer.command_options import AUTH_TOKEN_ENV, env_option, parse_command, positive_int, terminal_text
from mcp import MCPError

from .conversation import AgentResult, compact_json
from .eval import EvalError, EvalOptions, load_summary, run_eval, table
from .llm import ChatModel, EndpointError, judge_config, model_config
from .loop import MAX_ITERATIONS, TOKEN_BUDGET, LoopLimits
from .mcp_tools import ServerTarget, connect
from .traces import TracesError
from .workflows import WORKFLOWS, answer

KNOWN_ERRORS = (EndpointError, WorkflowError, EvalError, TracesError, MCPError, httpx2.HTTPError)


def add_common(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", metavar="DIR", help="index to serve: starts `arag-mcp --index DIR` over stdio")
    where.add_argument("--server", metavar="URL", help="a running MCP server, e.g. http://127.0.0.1:8000/mcp")
    env_option(parser, "--server-token", AUTH_TOKEN_ENV, default=None, help="bearer token the --server expects")
    parser.add_argument("--profile", help="tool profile of the started server (arag-mcp --profile), e.g. naive")
    parser.add_argument("--workflow", choices=sorted(WORKFLOWS), default="react", help="default: react")
    parser.add_argument("--model", help="chat model name (or $ARAG_AGENT_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (or $OPENAI_BASE_URL)")
    parser.add_argument("--api-key", help="endpoint key (or $OPENAI_API_KEY)")
    parser.add_argument(
        "--temperature", type=float, default=None, help="sampling temperature (default: the endpoint's)"
    )
    parser.add_argument(
        "--max-iterations", type=positive_int, default=MAX_ITERATIONS, help=f"default: {MAX_ITERATIONS}"
    )
    parser.add_argument("--token-budget", type=positive_int, default=TOKEN_BUDGET, help=f"default: {TOKEN_BUDGET}")


def target_of(args: argparse.Namespace, parser: argparse.ArgumentParser) -> ServerTarget:
    if args.server and args.profile:
        parser.error("--profile applies to a server this command starts (--index); a running --server has its own")
    if args.index and "://" not in args.index and not Path(args.index).exists():
        parser.error(f"no index at {Path(args.index).resolve()}; build one with arag-index build SOURCES --index DIR")
    index = args.index if not args.index or "://" in args.index else str(Path(args.index).resolve())
    return ServerTarget(
        index=index, url=args.server, profile=args.profile, token=args.server_token if args.server else None
    )


def agent_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="arag-agent", description="Answer questions with an A-RAG agent over MCP.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    ask = commands.add_parser("ask", help="answer one question; prints the answer, cited chunk ids and a trace")
    ask.add_argument("question")
    add_common(ask)
    ask.add_argument("--json", action="store_true", help="print the whole trace as JSON instead")
    args = parse_command(parser, argv)
    target = target_of(args, ask)
    limits = LoopLimits(args.max_iterations, args.token_budget)

    async def run() -> AgentResult:
        model = ChatModel(model_config(args.model, args.base_url, args.api_key, args.temperature))
        try:
            async with connect(target) as tools:
                return await answer(args.workflow, tools, model, args.question, limits)
        finally:
            await model.close()

    result = guarded("arag-agent", lambda: anyio.run(run))
    if not isinstance(result, AgentResult):
        return result
    print(terminal_text(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) if args.json else render(result)))
    return 0


def render(result: AgentResult) -> str:
    lines = [result.answer or "(no answer)", "", f"cited: {', '.join(result.cited) or 'none'}", "trace:"]
    for number, call in enumerate(result.tool_calls, 1):
        arguments = compact_json(call.arguments) if isinstance(call.arguments, dict) else repr(call.arguments)
        flag = "  error" if call.is_error else ""
        lines.append(f"  {number}. {call.name} {arguments[:160]}  {call.retrieved_tokens} tokens{flag}")
    lines.append(
        f"{len(result.tool_calls)} tool calls, {result.retrieved_tokens} retrieved tokens, {result.llm_calls} model "
        f"calls ({result.prompt_tokens} prompt / {result.completion_tokens} completion tokens), {result.seconds} s"
    )
    return "\n".join(lines)


def eval_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="arag-eval", description="Evaluate an agent workflow the A-RAG paper's way.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser("run", help="answer and score a dataset's questions (resumable)")
    run.add_argument("--dataset", required=True, type=Path, help="folder with questions.jsonl (bench-data layout)")
    add_common(run)
    run.add_argument("--judge-model", help="judge model (or $ARAG_JUDGE_MODEL; default: the agent's model)")
    run.add_argument("--limit", type=positive_int, help="only the first N questions")
    run.add_argument("--concurrency", type=positive_int, default=1, help="questions answered at once (default: 1)")
    run.add_argument("--out", type=Path, help="run folder (default: runs/DATASET-WORKFLOW-PROFILE-MODEL)")
    compare = commands.add_parser("compare", help="print runs side by side")
    compare.add_argument("runs", nargs="+", type=Path, help="run folders (or their summary.json)")
    args = parse_command(parser, argv)
    if args.command == "compare":
        summaries = guarded("arag-eval", lambda: [load_summary(path) for path in args.runs])
        if isinstance(summaries, int):
            return summaries
        print(table(summaries, [path.name if path.is_dir() else path.parent.name for path in args.runs]))
        return 0

    target = target_of(args, run)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="arag-eval %(message)s")
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    result = guarded("arag-eval", lambda: evaluate(args, target))
    if isinstance(result, int):
        return result
    print(table([result], [result["workflow"]]))
    print(f"\ntraces and summary.json in {result['out']}")
    return 0


def evaluate(args: argparse.Namespace, target: ServerTarget) -> dict:
    agent = model_config(args.model, args.base_url, args.api_key, args.temperature)
    judge = judge_config(agent, args.judge_model)
    name = "-".join([args.dataset.resolve().name, args.workflow, args.profile or "default", agent.model])
    out = args.out or Path("runs") / re.sub(r"[^A-Za-z0-9._-]+", "_", name)
    options = EvalOptions(
        dataset=args.dataset,
        out=out,
        target=target,
        agent=agent,
        judge=judge,
        workflow=args.workflow,
        limits=LoopLimits(args.max_iterations, args.token_budget),
        limit=args.limit,
        concurrency=args.concurrency,
    )
    summary = anyio.run(run_eval, options)
    return {**summary, "out": str(out)}


def guarded(prog: str, action):  # noqa: ANN001, ANN201 - any action; its value or an exit status
    """Run `action`; a known failure becomes one line on stderr and exit status 1."""
    try:
        return action()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; finished questions are kept and a new run resumes", file=sys.stderr)
        return 130
    except BaseException as exc:  # noqa: BLE001 - task groups wrap failures in exception groups
        known = find_known(exc)
        if known is None:
            raise
        print(f"{prog}: error: {describe(known)}", file=sys.stderr)
        return 1


def find_known(exc: BaseException) -> BaseException | None:
    if isinstance(exc, KNOWN_ERRORS):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = find_known(inner)
        if found is not None:
            return found
    return None


def describe(exc: BaseException) -> str:
    if isinstance(exc, MCPError):
        return f"the MCP server failed ({exc}); check --index, or --server and its --server-token, and the server's log"
    if isinstance(exc, httpx2.HTTPError):
        return f"cannot reach the MCP server ({exc}); check the --server URL and that the server runs"
    return str(exc)
