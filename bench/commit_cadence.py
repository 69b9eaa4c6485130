"""When a long build commits: `arag-index build` in its own process, its manifest read every 0.2 s,
each commit's time and committed sentences printed as they land; stopped after --minutes.

A commit falls between two documents, the first to end once --commit-seconds have passed since the
last (docs/indexing.md), so the gaps between commits are --commit-seconds plus the rest of the
document in hand: the figure a user of a slow machine needs.

    python bench/commit_cadence.py                                    # graphrag-novel, 10 minutes
    python bench/commit_cadence.py --source ../shared/bench-data/musique/corpus.jsonl --minutes 5
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH_DATA, RESULTS, log, write_json  # noqa: E402


def committed(index: Path) -> tuple[int, int] | None:
    """(documents, sentences) the index's manifest names, or None before the first commit."""
    try:
        counts = json.loads((index / "manifest.json").read_text()).get("counts") or {}
    except (OSError, ValueError):
        return None
    return counts.get("documents", 0), counts.get("sentences", 0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, nargs="+", default=[BENCH_DATA / "graphrag-novel" / "corpus.jsonl"])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--commit-seconds", type=float, default=60)
    parser.add_argument("--out", type=Path, default=RESULTS / "commit_cadence.json")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="cadence-"))
    index = work / "idx"
    command = [sys.executable, "-m", "arag_mcp.indexer", "build", *map(str, args.source), "--index", str(index)]
    command += ["--commit-seconds", str(args.commit_seconds), "--quiet"]
    results: dict = {"command": " ".join(command[1:]), "commits": []}
    started = time.monotonic()
    process = subprocess.Popen(command)
    last = None
    try:
        while process.poll() is None and time.monotonic() - started < 60 * args.minutes:
            now = committed(index)
            if now is not None and now != last:
                at = round(time.monotonic() - started, 1)
                results["commits"].append({"seconds": at, "documents": now[0], "sentences": now[1]})
                log(f"commit at {at} s: {now[0]} documents, {now[1]} sentences")
                write_json(args.out, results)
                last = now
            time.sleep(0.2)
    finally:
        finished = process.poll() is not None
        if not finished:
            process.terminate()  # a background job ignores SIGINT
            process.wait(120)
        shutil.rmtree(work, ignore_errors=True)
    times = [0.0] + [commit["seconds"] for commit in results["commits"]]
    gaps = [round(b - a, 1) for a, b in zip(times, times[1:])]
    results |= {"finished": finished, "gaps_s": gaps, "max_gap_s": max(gaps, default=None)}
    write_json(args.out, results)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
