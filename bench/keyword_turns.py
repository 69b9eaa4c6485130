"""keyword_search of several checkouts timed in turn, query by query, on the same synthetic chunks.

Each checkout answers in a process of its own Python, on the `chunks-N` index its own
`bench/speed.py` wrote (so each reads the index format it writes). The driver sends every query
to each checkout in turn, the order alternating from round to round, so that a change in the
machine's load touches all alike. This is how revisions are compared: two separate runs of
`speed.py` on the same code gave keyword p50s up to 40% apart.

    python bench/keyword_turns.py --chunks 10000 100000 --rounds 3 \\
        --checkout . .venv/bin/python \\
        --checkout ../old ../old/.venv/bin/python arag_mcp.indexer.reader:open_index arag_mcp.server.keywords:keyword_search

A checkout is DIR PYTHON, and where its code has other module paths, the two functions as
MODULE:NAME (default: this checkout's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH_DATA, RESULTS, log, write_json  # noqa: E402
from speed import QUERIES, _label, keyword_queries, passages, synthetic_chunks  # noqa: E402

OPEN_INDEX = "arag_mcp.indexer.index.snapshot:open_index"
KEYWORD_SEARCH = "arag_mcp.indexer.index.keywords.search:keyword_search"
WORKER = """
import importlib, json, sys, time
def named(spec):
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)
open_index, keyword_search = named(sys.argv[2]), named(sys.argv[3])
snapshot = open_index(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    match, keywords = json.loads(line)
    started = time.perf_counter()
    hits = keyword_search(snapshot, keywords, 5, match).hits
    print(json.dumps([time.perf_counter() - started, [hit.chunk.chunk_id for hit in hits]]), flush=True)
"""


class Checkout:
    """One checkout's worker process, answering keyword searches on its own index."""

    def __init__(self, spec: Sequence[str], chunks: int) -> None:
        if len(spec) not in (2, 4):
            raise SystemExit(f"--checkout takes DIR PYTHON [OPEN_INDEX KEYWORD_SEARCH], not {' '.join(spec)}")
        folder, python, *functions = spec
        self.name = str(Path(folder).resolve())
        index = Path(folder) / "bench" / "results" / "work" / f"chunks-{_label(chunks)}"
        if not index.exists():
            raise SystemExit(f"no {index}: run `python bench/speed.py --chunks {chunks} --parts keyword` there first")
        self.process = subprocess.Popen(
            [python, "-c", WORKER, str(index.resolve()), *(functions or [OPEN_INDEX, KEYWORD_SEARCH])],
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            raise SystemExit(f"the worker in {folder} did not start")

    def search(self, match: str, keywords: list[str]) -> tuple[float, list[str]]:
        self.process.stdin.write(json.dumps([match, keywords]) + "\n")
        self.process.stdin.flush()
        seconds, ids = json.loads(self.process.stdout.readline())
        return seconds, ids

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def compare(checkouts: list[Checkout], chunks: list[tuple[str, str]], rounds: int) -> dict:
    """Per case (match mode, keyword count): each checkout's p50 over rounds × QUERIES searches,
    and in how many searches all checkouts returned the same chunks."""
    results = {}
    for match in ("word", "substring"):
        for words in (1, 2, 3):
            times: dict[str, list[float]] = {checkout.name: [] for checkout in checkouts}
            same = 0
            queries = keyword_queries(chunks, words, QUERIES)
            for turn in range(rounds):
                order = checkouts if turn % 2 == 0 else checkouts[::-1]
                for keywords in queries:
                    answers = []
                    for checkout in order:
                        seconds, ids = checkout.search(match, keywords)
                        times[checkout.name].append(seconds)
                        answers.append(ids)
                    same += all(ids == answers[0] for ids in answers)
            case = f"{words} keywords" + ("" if match == "word" else f" ({match})")
            results[case] = {
                "p50_ms": {name: 1000 * float(np.median(spent)) for name, spent in times.items()},
                "same_chunks": f"{same}/{rounds * len(queries)}",
            }
            log(f"{case}: " + ", ".join(f"{name} {ms:.2f} ms" for name, ms in results[case]["p50_ms"].items()))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--checkout", nargs="+", action="append", required=True, help="DIR PYTHON [OPEN_INDEX KEYWORD_SEARCH]"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "keyword_turns.json")
    args = parser.parse_args(argv)
    records = passages(args.data)
    results: dict = {}
    for count in args.chunks:
        chunks = synthetic_chunks(records, min(count, 2000))  # the queries are names found in the first chunks
        checkouts = [Checkout(spec, count) for spec in args.checkout]
        try:
            results[f"chunks-{_label(count)}"] = compare(checkouts, chunks, args.rounds)
        finally:
            for checkout in checkouts:
                checkout.close()
        write_json(args.out, results)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
