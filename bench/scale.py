"""A large synthetic index written through the distributed write path, then served; and build rates on Ray.

- ``write``: N sentences (10 per chunk of ~1,000 tokens of real passages, as bench/speed.py makes
  them; vectors are real embeddings of 4,096 sentences reused with noise) written by Ray tasks as
  Lance fragments (ray_build.write_rows, the workers' write of `arag-index --ray`), appended and
  committed by the driver (IndexWriter), which then compacts and trains the IVF-PQ index.
- ``serve``: the index opened (seconds), semantic_search p50/p95 and recall@10 against exact
  search (one pass of NumPy over every vector, batch by batch, before the timing), keyword_search
  p50 (1-3 keywords), and the real MCP server over stdio: time to its first answers, round trips
  and peak RSS.
- ``build``: `arag-index build --ray` of the MuSiQue corpus on a local Ray of 1 and of 2 CPUs
  (one worker each): sentences per second, and the same build without Ray.

Each task makes its own chunks (synthetic_chunks seeded by its first chunk number), so no process
holds the whole corpus: 10M sentences are 1M chunks of ~5 KB. Results are written to --out after
every step, so a long run that stops keeps what it measured.

    python bench/scale.py --sentences 1000000 --parts write serve
    python bench/scale.py --parts build
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np
import pyarrow as pa
import ray

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer import (  # noqa: E402
    BuildOptions,
    Embedder,
    Index,
    IndexSnapshot,
    open_index,
)
from arag_mcp.indexer.index.reading import scan  # noqa: E402
from arag_mcp.indexer.index.schema import SentenceColumn as S  # noqa: E402
from arag_mcp.indexer.index.writer import IndexWriter  # noqa: E402
from arag_mcp.indexer.ray_build import Written, write_rows  # noqa: E402
from arag_mcp.server.search import retrieval  # noqa: E402
from common import BENCH_DATA, RESULTS, log, read_jsonl, write_json  # noqa: E402
from keyword_anchors import build_anchors_from_index  # noqa: E402
from speed import (  # noqa: E402
    QUERIES,
    SEMANTIC_QUERIES,
    WORK,
    bench_server,
    commit_synthetic,
    keyword_queries,
    keyword_side_by_side,
    keyword_tool,
    passages,
    print_keyword_table,
    recall_at_10,
    stats,
    synthetic_chunks,
    synthetic_rows,
    timed,
    vector_pool,
)

SENTENCES_PER_CHUNK = 10
CHUNKS_PER_TASK = 2000
EXACT_BATCH = 65536
"""Sentence vectors scored at a time by the exact search."""
PARTS = ("write", "serve", "build")


def slice_chunks(records: list[dict], first: int, count: int) -> list[tuple[str, str]]:
    """The chunks numbered first .. first + count - 1: each slice of CHUNKS_PER_TASK is seeded by its first number."""
    return synthetic_chunks(records, count, seed=first)


@ray.remote(num_cpus=1)
def _write_slice(uri: str, records: list[dict], first: int, count: int, pool: np.ndarray) -> Written:
    """One task's share of the index: its rows, written as fragments."""
    chunk_rows, sentence_rows, document_rows = synthetic_rows(
        slice_chunks(records, first, count), first, SENTENCES_PER_CHUNK, pool, np.random.default_rng(first)
    )
    return write_rows(uri, chunk_rows, sentence_rows, document_rows, sentence_rows.num_rows)


def write_distributed(uri: Path, chunk_count: int, records: list[dict], pool: np.ndarray, workers: int) -> dict:
    """Write the index through Ray tasks and one commit; the seconds each phase took."""
    started = time.perf_counter()
    writer = IndexWriter(str(uri), pool.shape[1], None, rebuild=True)
    ray.init(num_cpus=workers, object_store_memory=512 * 2**20, include_dashboard=False, log_to_driver=False)
    try:
        shared_pool, shared_records = ray.put(pool), ray.put(records)
        pending = [
            _write_slice.remote(
                str(writer.uri), shared_records, first, min(CHUNKS_PER_TASK, chunk_count - first), shared_pool
            )
            for first in range(0, chunk_count, CHUNKS_PER_TASK)
        ]
        written = Written()
        for part in ray.get(pending):
            written.add(part)
    finally:
        ray.shutdown()
    fragments_written = time.perf_counter()
    writer.append_fragments(written.fragments, written.chunk_rows, written.document_rows, written.sentences)
    appended = time.perf_counter()
    vector_index = writer.finish_tables()
    finished = time.perf_counter()
    commit_synthetic(writer, vector_index, started)
    return {
        "workers": workers,
        "fragments_s": round(fragments_written - started, 1),
        "append_s": round(appended - fragments_written, 1),
        "compact_and_index_s": round(finished - appended, 1),
        "total_s": round(time.perf_counter() - started, 1),
        "sentences_per_s_to_fragments": round(writer.tally.counts().sentences / (fragments_written - started)),
        "vector_index": vector_index,
    }


def bench_keyword(snapshot: IndexSnapshot, uri: Path, chunks: list[tuple[str, str]]) -> dict:
    """keyword_search (whole words) with 1, 2 and 3 keywords beside the anchors (keyword_anchors.py),
    as speed.py sets them side by side; speed.py also compares it with brute force."""
    log(f"{uri.name}: indexing the keyword anchors")
    anchors, notes = build_anchors_from_index(snapshot, WORK / f"{uri.name}-anchors")
    results: dict = {"anchors_built_s": {anchor.name: anchor.build_s for anchor in anchors}, "anchor_notes": notes}
    with keyword_tool(uri) as tool:
        for words in (1, 2, 3):
            case = keyword_side_by_side(snapshot, tool, anchors, keyword_queries(chunks, words, QUERIES), chunks)
            del case["rankings"], case["scored"]
            results[f"{words} keywords"] = case
    return results


def exact_rankings(snapshot: IndexSnapshot, queries: np.ndarray, top_k: int) -> list[list[str]]:
    """semantic_search's definition (chunks by their best sentence's similarity, ties by chunk id),
    exactly, in one pass over the sentence vectors a batch at a time: each query keeps its best
    sentences, enough to hold the best sentence of each of its top k chunks (a chunk has
    SENTENCES_PER_CHUNK sentences), with twice that margin."""
    keep = 2 * top_k * SENTENCES_PER_CHUNK
    scores = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    owners = np.empty((len(queries), 0), dtype=object)
    batches = scan(snapshot.sentences.table.search().select([S.CHUNK_ID, S.VECTOR]), EXACT_BATCH)
    for batch in batches:
        vectors = batch.column(S.VECTOR).flatten().to_numpy().reshape(batch.num_rows, -1)
        batch_scores = queries @ vectors.T
        best = np.argpartition(-batch_scores, min(keep, batch.num_rows) - 1, axis=1)[:, :keep]
        rows = np.unique(best)
        ids = np.empty(batch.num_rows, dtype=object)
        ids[rows] = batch.column(S.CHUNK_ID).take(pa.array(rows)).to_pylist()
        scores = np.concatenate([scores, np.take_along_axis(batch_scores, best, axis=1)], axis=1)
        owners = np.concatenate([owners, ids[best]], axis=1)
        kept = np.argpartition(-scores, min(keep, scores.shape[1]) - 1, axis=1)[:, :keep]
        scores, owners = np.take_along_axis(scores, kept, axis=1), np.take_along_axis(owners, kept, axis=1)
    rankings = []
    for query_scores, query_owners in zip(scores, owners):
        best_of: dict[str, float] = {}
        for score, owner in zip(query_scores.tolist(), query_owners.tolist()):
            best_of[owner] = max(score, best_of.get(owner, -np.inf))
        rankings.append(sorted(best_of, key=lambda owner: (-best_of[owner], owner))[:top_k])
    return rankings


def bench_semantic(snapshot: IndexSnapshot, embedder: Embedder, questions: list[str], warmup: list[str]) -> dict:
    """semantic_search timed after searching the `warmup` questions once, and its recall@10 against
    exact search, which runs first: nothing the size of the index is held while it is timed."""
    vectors = embedder.encode_queries(questions)
    started = time.perf_counter()
    exact = exact_rankings(snapshot, vectors, 10)
    exact_s = time.perf_counter() - started
    for vector in embedder.encode_queries(warmup):
        retrieval.semantic_search(snapshot, vector, 10)
    times, hits = timed(lambda v: retrieval.semantic_search(snapshot, v, 10), vectors)
    return {
        "sentences": snapshot.manifest.counts.sentences,
        "vector_index": snapshot.manifest.vector_index,
        "search": stats(times),
        "recall@10_vs_exact": recall_at_10(hits, exact),
        "exact_pass_s": round(exact_s, 1),
    }


def serve(uri: Path, chunks: list[tuple[str, str]], questions: list[str], warmup: list[str]) -> dict:
    started = time.perf_counter()
    snapshot = open_index(str(uri))
    opened = time.perf_counter() - started
    result: dict = {"open_index_s": round(opened, 2)}
    result["keyword_search"] = bench_keyword(snapshot, uri, chunks)
    result["semantic_search"] = bench_semantic(snapshot, Embedder().load(), questions, warmup)
    del snapshot
    result["server"] = anyio.run(bench_server, uri, chunks, questions)
    return result


def build_rates(corpus: Path) -> dict:
    """`arag-index build --ray` of `corpus` on a local Ray of 1 and 2 CPUs, and without Ray."""
    rates = {}
    with tempfile.TemporaryDirectory() as folder:
        Embedder().load()  # a first ONNX export is not build time
        for workers in (1, 2, 0):
            options = BuildOptions(progress=False, rebuild=True, ray="local" if workers else None)
            if workers:
                ray.init(
                    num_cpus=workers, object_store_memory=200 * 2**20, include_dashboard=False, log_to_driver=False
                )
            try:
                summary = Index(str(Path(folder) / f"idx-{workers}")).add([corpus], options)
            finally:
                if workers:
                    ray.shutdown()
            rates[f"ray, {workers} worker(s)" if workers else "local, no Ray"] = {
                "sentences": summary.embedded_sentences,
                "seconds": summary.seconds,
                "sentences_per_s": round(summary.embedded_sentences / summary.seconds, 1),  # the whole build's
            }
            log(f"build: {summary.describe()}")
    return rates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--sentences", type=int, default=1_000_000, help="size of the synthetic index")
    parser.add_argument("--workers", type=int, default=2, help="Ray CPUs writing the synthetic index")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--out", type=Path, default=RESULTS / "scale.json")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"no benchmark data at {args.data}; pass --data", file=sys.stderr)
        return 2
    WORK.mkdir(parents=True, exist_ok=True)
    results: dict = json.loads(args.out.read_text()) if args.out.exists() else {}
    name = f"scale-{args.sentences}"
    uri = WORK / name
    records = passages(args.data)
    chunk_count = args.sentences // SENTENCES_PER_CHUNK
    chunks = slice_chunks(records, 0, min(CHUNKS_PER_TASK, chunk_count))  # keyword queries are names in them
    if "write" in args.parts:
        log(f"{name}: writing {chunk_count} chunks through Ray ({args.workers} CPUs)")
        pool = vector_pool(Embedder().load(), records)
        results[name] = {"write": write_distributed(uri, chunk_count, records, pool, args.workers)}
        write_json(args.out, results)
    if "serve" in args.parts:
        log(f"{name}: serving")
        musique = [q["question"] for q in read_jsonl(args.data / "musique" / "questions.jsonl")]
        questions, warmup = musique[:SEMANTIC_QUERIES], musique[SEMANTIC_QUERIES : SEMANTIC_QUERIES + QUERIES]
        results.setdefault(name, {})["serve"] = serve(uri, chunks, questions, warmup)
        write_json(args.out, results)
    if "build" in args.parts:
        log("build rates on MuSiQue")
        results["build_musique"] = build_rates(args.data / "musique" / "corpus.jsonl")
        write_json(args.out, results)
    print(json.dumps(results, indent=2))
    print_keyword_table(
        {
            name: result["serve"]["keyword_search"]
            for name, result in results.items()
            if "keyword_search" in result.get("serve", {})
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
