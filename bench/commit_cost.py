"""What one edit costs: a one-note sync in a warm process, as a watcher's batch runs it.

    python bench/commit_cost.py                       # MuSiQue, one Markdown file per passage (3,141)
    python bench/commit_cost.py --edits 9 --append-sentences 300
    python bench/commit_cost.py --synthetic-chunks 100000     # bench/speed.py's synthetic index
    python bench/commit_cost.py --index bench/results/work/scale-10000000   # bench/scale.py's (1M chunks)

On the MuSiQue corpus written as one Markdown file per passage (bench/freshness.py's, built once
and cached in bench/results/work/freshness/), each edit appends a sentence with a new word to one
passage, then syncs that file alone (build.sync_paths, what `arag-index --watch` runs for a batch),
in this process, with the model loaded. For each edit it records the seconds, the bytes the process
wrote (/proc/self/io), how much the index folder grew (the sum of its files' sizes) and how many
sentences were embedded; and the index's size before the first edit and after the last, what a
run of edits leaves after cleanup (`--edits 200` for a long run). `--append-sentences N` adds a
document of N sentences and appends one sentence to it, as many times as there are edits,
reporting the sentences embedded each time. `--synthetic-chunks N` edits, instead, a folder of
notes added to a synthetic index of N chunks of ~1,000 tokens (bench/speed.py's, 10 sentences each,
written once and cached in bench/results/work/synthetic-N/, freshness.synthetic): the cost at sizes a build here could not
embed in reasonable time; `--index PATH` edits such notes added to a synthetic index already written
(bench/scale.py writes 1M chunks through Ray, which one process could not hold).
Results (medians, and every edit) go to bench/results/commit_cost.json as each part ends.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from common import RESULTS, log, write_json
from freshness import beside, prepared, synthetic, write_corpus

OUTPUT = RESULTS / "commit_cost.json"


def written_bytes() -> int:
    """Bytes this process has written to storage, all its threads (LanceDB's) included."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    raise RuntimeError("no write_bytes in /proc/self/io")


def folder_bytes(folder: Path) -> int:
    return sum(entry.stat().st_size for entry in folder.rglob("*") if entry.is_file())


def timed_sync(index: Path, paths: list[Path]) -> dict:
    """One sync of `paths`, with what it cost."""
    from arag_mcp.indexer import BuildOptions, Index

    os.sync()
    size, written, started = folder_bytes(index), written_bytes(), time.perf_counter()
    summary = Index(str(index)).sync_paths(paths, BuildOptions(progress=False))
    seconds = time.perf_counter() - started
    os.sync()
    return {
        "seconds": round(seconds, 3),
        "written_mb": round((written_bytes() - written) / 1e6, 2),
        "growth_mb": round((folder_bytes(index) - size) / 1e6, 2),
        "embedded_sentences": summary.embedded_sentences,
        "chunks": summary.chunks,
    }


def medians(edits: list[dict]) -> dict:
    return {key: statistics.median(edit[key] for edit in edits) for key in edits[0] if key != "chunks"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=5, help="one-note edits timed (default: 5)")
    parser.add_argument(
        "--append-sentences", type=int, default=300, help="sentences of the document appended to (0: none)"
    )
    parser.add_argument(
        "--synthetic-chunks", type=int, default=0, help="edit notes beside a synthetic index of N chunks"
    )
    parser.add_argument("--index", type=Path, help="edit notes added to this synthetic index (bench/scale.py's)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    if args.index:
        sources, index = beside(args.index)
    elif args.synthetic_chunks:
        sources, index = synthetic(args.synthetic_chunks)
    else:
        sources, index = prepared("musique", write_corpus)
    results: dict = {"index": str(index), "cpu_cores": os.cpu_count()}
    notes = sorted(sources.rglob("*.md"))
    timed_sync(index, notes[:1])  # loads the model, catches up after an earlier run's edits
    size_before = folder_bytes(index)
    edits = []
    for number in range(args.edits):
        note = notes[(number * 997) % len(notes)]
        note.write_text(note.read_text() + f"\nThe archivist filed note commitcost{time.time_ns()}.\n")
        edits.append(timed_sync(index, [note]))
        log(f"edit {number + 1}: {edits[-1]}")
    results["one_note"] = {
        "median": medians(edits),
        "index_mb_before": round(size_before / 1e6, 1),
        "index_mb_after": round(folder_bytes(index) / 1e6, 1),
        "edits": edits,
    }
    write_json(args.output, results)
    if args.append_sentences:
        long_note = sources / "appended.md"
        body = " ".join(
            f"Ledger entry {n} names the {('mill', 'ferry', 'chapel', 'forge')[n % 4]} of parish {n * 7}."
            for n in range(args.append_sentences)
        )
        long_note.write_text(f"# Parish ledger\n\n{body}\n")
        results["long_document"] = timed_sync(index, [long_note])
        appends = []
        for number in range(args.edits):
            long_note.write_text(long_note.read_text() + f"The sexton rang bell {number} at noon.\n")
            appends.append(timed_sync(index, [long_note]))
            log(f"append {number + 1}: {appends[-1]}")
        results["append_one_sentence"] = {"median": medians(appends), "edits": appends}
        long_note.unlink()
        timed_sync(index, [long_note])
    write_json(args.output, results)
    print(json.dumps({key: value.get("median", value) for key, value in results.items() if isinstance(value, dict)}))


if __name__ == "__main__":
    main()
