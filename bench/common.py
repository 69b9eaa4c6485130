"""Paths and small helpers shared by the benchmarks."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

BENCH_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench-data"
RESULTS = Path(__file__).resolve().parent / "results"
_STARTED = time.perf_counter()


def read_jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def log(message: str) -> None:
    """Progress on stderr, stamped with seconds since start."""
    print(f"[{time.perf_counter() - _STARTED:6.1f}s] {message}", file=sys.stderr, flush=True)


def write_json(out: Path, results: dict) -> None:
    """Written after every step too, so a long run that stops keeps what it measured."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
