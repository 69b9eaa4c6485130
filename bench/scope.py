"""Scoped semantic search where the IVF-PQ index answers: filtering inside the index search
(LanceDB prefilter) against exact search over the scope's own sentence vectors, by scope size.

Uses a synthetic index that bench/speed.py wrote (`chunks-100k`: 1M sentences, or `chunks-20k`).
A scope is a random set of documents holding the given share of the index; for each, over the
same queries (sentence vectors of the index with noise), it reports p50/p95 ms of both ways and
the recall@10 of the prefiltered search against the exact one; and what resolving a scope costs
(the per-chunk labels made once per build from the chunk catalogue, then each scope).

    python bench/scope.py --index bench/results/work/chunks-100k
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer import open_index  # noqa: E402
from arag_mcp.indexer.index.reading import sql_list  # noqa: E402
from arag_mcp.indexer.index.schema import ChunkColumn, SentenceColumn  # noqa: E402
from arag_mcp.server.search.scope import in_scope  # noqa: E402
from common import RESULTS, log  # noqa: E402

SHARES = (0.0005, 0.005, 0.01, 0.02, 0.05, 0.25)
QUERIES = 30
TOP = 10


def exact(snapshot, vector: np.ndarray, doc_keys: list[str], limit: int) -> list[str]:
    """The `limit` nearest sentences of these documents, by reading their vectors and scoring them all."""
    table = (
        snapshot.sentences.table.search()
        .where(f"{SentenceColumn.DOC_KEY} IN ({sql_list(doc_keys)})")
        .select([SentenceColumn.CHUNK_ID, SentenceColumn.POSITION, SentenceColumn.VECTOR])
        .limit(None)
        .to_arrow()
    )
    vectors = table[SentenceColumn.VECTOR].combine_chunks().flatten().to_numpy().reshape(table.num_rows, -1)
    scores = vectors @ vector
    best = np.argsort(-scores)[:limit]
    ids, positions = table[SentenceColumn.CHUNK_ID].to_pylist(), table[SentenceColumn.POSITION].to_pylist()
    return [f"{ids[i]}#{positions[i]}" for i in best]


def prefiltered(snapshot, vector: np.ndarray, doc_keys: list[str], limit: int) -> list[str]:
    """The index search, filtered to these documents first."""
    search = snapshot.sentences.table.search(vector).distance_type("dot").limit(limit)
    search = search.where(f"{SentenceColumn.DOC_KEY} IN ({sql_list(doc_keys)})", prefilter=True)
    settings = snapshot.manifest.vector_index
    search = search.nprobes(settings["nprobes"]).refine_factor(settings["refine_factor"])
    found = search.select([SentenceColumn.CHUNK_ID, SentenceColumn.POSITION, "_distance"]).to_arrow()
    return [
        f"{cid}#{position}"
        for cid, position in zip(found[SentenceColumn.CHUNK_ID].to_pylist(), found[SentenceColumn.POSITION].to_pylist())
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=RESULTS / "work" / "chunks-100k")
    args = parser.parse_args()
    snapshot = open_index(str(args.index))
    assert snapshot.sentences.in_memory is None, (
        "this index is searched exactly in memory; use one with an IVF-PQ index"
    )
    started = time.perf_counter()
    keys = snapshot.catalogue.labels[ChunkColumn.DOC_KEY].to_pylist()
    labels_ms = 1000 * (time.perf_counter() - started)
    resolving = []
    for _ in range(20):
        started = time.perf_counter()
        in_scope(snapshot, {"source": "*"})
        resolving.append(1000 * (time.perf_counter() - started))
    log(
        f"labels of {len(keys)} chunks made in {labels_ms:.0f} ms; a scope resolves in {np.median(resolving):.1f} ms p50"
    )
    rng = np.random.default_rng(0)
    sample = snapshot.sentences.table.search().select([SentenceColumn.VECTOR]).limit(QUERIES).to_arrow()
    queries = sample[SentenceColumn.VECTOR].combine_chunks().flatten().to_numpy().reshape(QUERIES, -1)
    queries = queries + rng.normal(0, 0.05, queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    report = []
    for share in SHARES:
        scope = sorted(rng.choice(keys, max(1, int(share * len(keys))), replace=False).tolist())
        timings: dict[str, list[float]] = {"prefilter": [], "exact": []}
        recall = []
        for vector in queries:
            started = time.perf_counter()
            filtered = prefiltered(snapshot, vector, scope, TOP)
            timings["prefilter"].append(time.perf_counter() - started)
            started = time.perf_counter()
            truth = exact(snapshot, vector, scope, TOP)
            timings["exact"].append(time.perf_counter() - started)
            recall.append(len(set(filtered) & set(truth)) / max(1, len(truth)))
        row = {
            "documents": len(scope),
            "sentences": snapshot.manifest.counts.sentences * len(scope) // len(keys),
            **{
                f"{way}_ms": {
                    "p50": round(1000 * float(np.median(t)), 1),
                    "p95": round(1000 * float(np.percentile(t, 95)), 1),
                }
                for way, t in timings.items()
            },
            "prefilter_recall@10": round(float(np.mean(recall)), 3),
        }
        log(json.dumps(row))
        report.append(row)
    summary = {"index": args.index.name, "labels_ms": round(labels_ms), "resolve_p50_ms": float(np.median(resolving))}
    (RESULTS / "scope.json").write_text(json.dumps({**summary, "scopes": report}, indent=2))


if __name__ == "__main__":
    main()
