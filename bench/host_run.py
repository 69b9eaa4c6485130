"""A host run: a model drives the real server over streamable HTTP, one tool call per command, on a
sample of questions whose answers it never sees; the calls and what they returned are logged, and
the answers scored afterwards.

    python bench/host_run.py prepare --set musique --sample 25 --seed 7 --out RUN
        builds (or reuses) the set's index, writes RUN/questions.json (no answers) and RUN/gold.json
    arag-mcp --index bench/results/work/host-musique --transport streamable-http --port 8765 &
    python bench/host_run.py listing --port 8765 > RUN/listing.json
        the server's instructions and tools/list, as a host sees them, with their sizes
    python bench/host_run.py call --port 8765 --log RUN/calls.jsonl --question Q1 TOOL '{"arg": ...}'
        one tool call: its text on stdout, a line in the log (question, tool, characters returned)
    python bench/host_run.py score RUN
        reads RUN/answers.json ({question id: answer}): Contain-Acc, calls and characters per question

The model is given the listing, the call command and the questions, and writes answers.json.
Retrieved tokens are counted as characters / 4 (the paper's figures count tokens of what tools return).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import string
import subprocess
import sys
import unicodedata
from pathlib import Path

from common import BENCH_DATA, RESULTS, read_jsonl

SETS = {"musique": "musique", "2wiki": "2wikimultihopqa"}


def prepare(args: argparse.Namespace) -> None:
    folder = BENCH_DATA / SETS[args.set]
    index = RESULTS / "work" / f"host-{args.set}"
    if not (index / "manifest.json").exists():
        subprocess.run(
            [sys.executable, "-m", "arag_mcp.indexer", "build", str(folder / "corpus.jsonl"), "--index", str(index)],
            check=True,
        )
    questions = list(read_jsonl(folder / "questions.jsonl"))
    sample = random.Random(args.seed).sample(questions, args.sample)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "questions.json").write_text(
        json.dumps([{"id": q["id"], "question": q["question"]} for q in sample], indent=1)
    )
    (out / "gold.json").write_text(json.dumps({q["id"]: q["answers"] for q in sample}, indent=1))
    print(index)


async def _session(port: int, work):  # noqa: ANN001, ANN202 - a coroutine taking the client
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp")) as client:
        return await work(client)


def listing(args: argparse.Namespace) -> None:
    async def work(client):  # noqa: ANN001, ANN202
        tools = await client.list_tools()
        listed = [tool.model_dump(mode="json", exclude_none=True, by_alias=True) for tool in tools.tools]
        instructions = client.instructions
        return {
            "instructions": instructions,
            "instructions_chars": len(instructions or ""),
            "tools": listed,
            "tools_chars": len(json.dumps(listed)),
        }

    print(json.dumps(asyncio.run(_session(args.port, work)), indent=1))


def call(args: argparse.Namespace) -> None:
    arguments = json.loads(args.arguments) if args.arguments else {}

    async def work(client):  # noqa: ANN001, ANN202
        result = await client.call_tool(args.tool, arguments)
        return "\n".join(part.text for part in result.content if hasattr(part, "text")), result.is_error

    text, error = asyncio.run(_session(args.port, work))
    print(text)
    with open(args.log, "a", encoding="utf-8") as log:
        record = {"question": args.question, "tool": args.tool, "arguments": arguments, "chars": len(text)}
        log.write(json.dumps({**record, "error": bool(error)}) + "\n")


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(c for c in text if c not in string.punctuation and not unicodedata.combining(c))
    return " ".join(w for w in text.split() if w not in {"a", "an", "the"})


def score(args: argparse.Namespace) -> None:
    run = Path(args.run)
    gold = json.loads((run / "gold.json").read_text())
    answers = json.loads((run / "answers.json").read_text())
    calls = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    for qid, accepted in gold.items():
        answer = _normal(str(answers.get(qid, "")))
        contained = any(re.search(rf"\b{re.escape(_normal(a))}\b", answer) for a in accepted if _normal(a))
        own = [c for c in calls if c["question"] == qid]
        rows.append({"id": qid, "contain": contained, "calls": len(own), "chars": sum(c["chars"] for c in own)})
    n = len(rows)
    summary = {
        "questions": n,
        "contain_acc": round(100 * sum(r["contain"] for r in rows) / n, 1),
        "calls_per_question": round(sum(r["calls"] for r in rows) / n, 2),
        "retrieved_tokens_per_question": round(sum(r["chars"] for r in rows) / n / 4),
        "errors": sum(c["error"] for c in calls),
        "by_tool": {t: sum(c["tool"] == t for c in calls) for t in sorted({c["tool"] for c in calls})},
    }
    (run / "score.json").write_text(json.dumps({"summary": summary, "questions": rows}, indent=1))
    print(json.dumps(summary, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare")
    p.add_argument("--set", choices=sorted(SETS), default="musique")
    p.add_argument("--sample", type=int, default=25)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", required=True)
    p.set_defaults(handler=prepare)
    p = commands.add_parser("listing")
    p.add_argument("--port", type=int, default=8765)
    p.set_defaults(handler=listing)
    p = commands.add_parser("call")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--log", required=True)
    p.add_argument("--question", required=True)
    p.add_argument("tool")
    p.add_argument("arguments", nargs="?")
    p.set_defaults(handler=call)
    p = commands.add_parser("score")
    p.add_argument("run")
    p.set_defaults(handler=score)
    args = parser.parse_args()
    args.handler(args)


if __name__ == "__main__":
    main()
