"""Can semantic_search tell a question the index cannot answer? For each question of a shared set,
its best semantic_search score with the gold passages in the index and with them masked out (a
scope without them: the same index, the answer removed), and, for thresholds set at percentiles of
the answered scores, the share of each that a "weak match" signal would flag.

Two signals: the best score itself, and the best score's margin over the next 49 (in standard
deviations of theirs). A threshold is chosen here with the gold known, the best any calibration
from the index alone could do.

    python bench/weak_match.py --set musique [--questions 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer import (
    Embedder,
    open_index,
)
from arag_mcp.indexer.index.ids import doc_key  # noqa: E402
from arag_mcp.server.search import retrieval  # noqa: E402
from common import BENCH_DATA, RESULTS, read_jsonl, write_json  # noqa: E402
from host_run import SETS  # noqa: E402

PERCENTILES = (1, 2, 5, 10, 20)
"""Percentiles of the answered questions' signal at which a threshold is tried."""
DEPTH = 50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=sorted(SETS), default="musique")
    parser.add_argument("--questions", type=int, default=1000)
    args = parser.parse_args()
    index = RESULTS / "work" / f"host-{args.set}"  # built by host_run.py prepare
    snapshot = open_index(str(index))
    questions = [q for q in read_jsonl(BENCH_DATA / SETS[args.set] / "questions.jsonl") if q["supporting_ids"]]
    questions = questions[: args.questions]
    vectors = Embedder().load().encode_queries([q["question"] for q in questions], batch_size=64)
    doc_keys = np.array([chunk_id.rsplit("-", 1)[0] for chunk_id in snapshot.catalogue.ids()])
    signals: dict[str, dict[str, list[float]]] = {"best score": {}, "margin": {}}
    for signal in signals.values():
        signal["answered"], signal["gold removed"] = [], []
    for question, vector in zip(questions, vectors):
        without_gold = ~np.isin(doc_keys, [doc_key(g) for g in question["supporting_ids"]])
        for condition, mask in (("answered", None), ("gold removed", without_gold)):
            scores = np.array([hit.score for hit in retrieval.semantic_search(snapshot, vector, DEPTH, mask)])
            signals["best score"][condition].append(float(scores[0]))
            signals["margin"][condition].append(float((scores[0] - scores[1:].mean()) / (scores[1:].std() + 1e-6)))
    results = {}
    for name, signal in signals.items():
        answered, removed = np.array(signal["answered"]), np.array(signal["gold removed"])
        results[name] = {
            f"flags {p}% of answered": {
                "threshold": round(float(np.percentile(answered, p)), 3),
                "gold removed flagged %": round(100 * float(np.mean(removed < np.percentile(answered, p))), 1),
            }
            for p in PERCENTILES
        }
        print(name, results[name])
    write_json(RESULTS / f"weak_match_{args.set}.json", {"questions": len(questions), "signals": results})


if __name__ == "__main__":
    main()
