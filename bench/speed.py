"""Speed and memory of the tools at scale, against the paper's reference algorithms, in one run.

Synthetic indexes are written through the indexer's own storage code (IndexWriter):

- ``chunks-N``: N chunks of ~1,000 tokens, each a run of real passages from the shared corpora;
  its sentence table holds the first 10 sentences of each chunk (10 x N vectors: 10,000, 100,000
  and 1,000,000 at 1k, 10k and 100k chunks; the last is past the size where the indexer trains an
  IVF-PQ index).

Vectors are real embeddings of a pool of 4,096 real sentences, reused with Gaussian noise
(sigma 0.05) and re-normalised, so the vector space has realistic structure without embedding
millions of sentences. Then, at every size, each over >= 50 queries (median and p95):

- keyword_search with 1, 2, 3 keywords, in both match modes, vs the reference: a Python loop over
  every chunk held in memory (whole folded words with titles; the paper's lower-cased substring
  counts); results must be identical;
- semantic_search (query embedding and search timed apart) vs the reference: NumPy brute force
  over all vectors held in memory, the two timed in turn on each query so that a change in the
  machine's load touches both alike; recall@10 of our chunks against the exact ones; where the
  IVF-PQ index answers, up to 400k sentences, also the exact in-memory search at that size
  (the crossover);
- chunk_read of 1-3 ids;
- the real server over stdio: time to the initialize answer and to each tool's first answer,
  keyword_search and semantic_search round trips, and its peak RSS;
- a real ``arag-index build`` of a shared corpus: sentences/s and peak RSS.

    python bench/speed.py --quick   # 1k and 10k chunks (10k, 100k sentences), ~5 min once cached
    python bench/speed.py           # and 100k chunks (1M sentences); ~10 min the first time
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import anyio
import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

import index_dump  # noqa: E402
from arag_mcp.indexer import (  # noqa: E402
    BACKENDS,
    DEFAULT_BACKEND,
    Embedder,
    IndexSnapshot,
    open_index,
)
from arag_mcp.indexer.index.ids import chunk_id, doc_key  # noqa: E402
from arag_mcp.indexer.index.keywords import keyword_search  # noqa: E402
from arag_mcp.indexer.index.keywords.definition import WordCorpus, keyword_ranking  # noqa: E402
from arag_mcp.indexer.index.manifest import FORMAT_VERSION, Manifest, read_manifest  # noqa: E402
from arag_mcp.indexer.index.schema import (  # noqa: E402
    ChunkColumn,
    DocumentColumn,
    SentenceColumn,
    chunks_schema,
    documents_schema,
)
from arag_mcp.indexer.index.vectors import SentenceVectors  # noqa: E402
from arag_mcp.indexer.index.writer import IndexWriter, sentence_rows_of, vector_search  # noqa: E402
from arag_mcp.indexer.text.context import SENTENCE_CONTEXT  # noqa: E402
from arag_mcp.indexer.text.sentences import SPLITTER_VERSION, split_sentences  # noqa: E402
from arag_mcp.server.search import retrieval  # noqa: E402
from arag_mcp.server.search.conversations import Conversations  # noqa: E402
from arag_mcp.server.search.live_index import LiveIndex  # noqa: E402
from arag_mcp.server.served import ServedIndex  # noqa: E402
from arag_mcp.server.tools.keyword_search import TOOL as KEYWORD_SEARCH  # noqa: E402
from brute_force import SentenceMatrix  # noqa: E402
from common import BENCH_DATA, RESULTS, log, read_jsonl, write_json  # noqa: E402
from keyword_anchors import Anchor, build_anchors, our_ranking  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.mcpserver import Context  # noqa: E402

QUERIES = 50
REFERENCE_QUERIES_ABOVE_10K = 10
"""The keyword references (Python loops over every chunk) answer the first 10 queries of each case
above 10k chunks: at 100k, all 50 take most of an hour."""
SEMANTIC_QUERIES = 150
"""semantic_search is timed and scored on more questions: at 1M sentences its recall against exact
search differed by up to 0.11 between sets of 50."""
EXACT_COMPARISON_MAX_ROWS = 400_000
"""Where the IVF-PQ index answers, exact in-memory search is timed too up to this size (the
crossover); at 1M its matrix beside the reference's took the bench past 9 GB."""
POOL = 4096
CHUNK_CHARS = 4500
WORK = RESULTS / "work"


def passages(data: Path) -> list[dict]:
    records = []
    for name in ("musique", "2wikimultihopqa"):
        records += list(read_jsonl(data / name / "corpus.jsonl"))
    return records


def synthetic_chunks(records: list[dict], count: int, seed: int = 0) -> list[tuple[str, str]]:
    """(title, ~1,000-token text) pairs made of shuffled real passages."""
    rng = random.Random(seed)
    chunks = []
    while len(chunks) < count:
        parts, size = [], 0
        while size < CHUNK_CHARS:
            record = records[rng.randrange(len(records))]
            parts.append(record["text"])
            size += len(record["text"])
        chunks.append((records[rng.randrange(len(records))]["title"], " ".join(parts)))
    return chunks


def vector_pool(embedder: Embedder, records: list[dict]) -> np.ndarray:
    cache = WORK / "pool.npy"
    if cache.exists():
        return np.load(cache)
    sentences = [r["text"][s:e] for r in records[:3000] for s, e in split_sentences(r["text"])][:POOL]
    pool = embedder.encode_documents(sentences, batch_size=16)
    np.save(cache, pool)
    return pool


def perturbed(pool: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    vectors = pool[rng.integers(0, len(pool), count)] + rng.normal(0, 0.05, (count, pool.shape[1])).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def write_index(uri: Path, chunks: list[tuple[str, str]], sentences_per_chunk: int, pool: np.ndarray) -> None:
    """Write a synthetic index through IndexWriter, the indexer's storage code."""
    manifest = read_manifest(str(uri))
    if manifest and _current(manifest):
        return
    started = time.perf_counter()
    writer = IndexWriter(str(uri), pool.shape[1], None, rebuild=True)
    rng = np.random.default_rng(0)
    for first in range(0, len(chunks), 2000):
        writer.add(*synthetic_rows(chunks[first : first + 2000], first, sentences_per_chunk, pool, rng))
    vector_index = writer.finish_tables()
    commit_synthetic(writer, vector_index, started)


def synthetic_rows(
    chunks: list[tuple[str, str]], first: int, sentences_per_chunk: int, pool: np.ndarray, rng: np.random.Generator
) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The chunk, sentence and documents rows of `chunks` (numbered from `first`): one document of one
    chunk each, its first `sentences_per_chunk` sentences with vectors from the pool, perturbed."""
    chunk_rows, sentence_rows, document_rows = [], [], []
    for number, (title, text) in enumerate(chunks, first):
        key = doc_key(f"synthetic-{number}")
        spans = split_sentences(text)[:sentences_per_chunk]
        chunk_rows.append(
            {
                ChunkColumn.ID: chunk_id(key, 0),
                ChunkColumn.DOC_KEY: key,
                ChunkColumn.DOC_ID: f"synthetic-{number}",
                ChunkColumn.DOC_HASH: "-",
                ChunkColumn.TITLE: title,
                ChunkColumn.SOURCE: "synthetic",
                ChunkColumn.PART: 0,
                ChunkColumn.PARTS: 1,
                ChunkColumn.TEXT: text,
                ChunkColumn.TOKENS: len(text) // 4,
                ChunkColumn.SENTENCE_STARTS: [s for s, _ in spans],
                ChunkColumn.SENTENCE_ENDS: [e for _, e in spans],
                ChunkColumn.METADATA: "",
                ChunkColumn.FILE_TYPE: "txt",
            }
        )
        sentence_rows += [
            {
                SentenceColumn.CHUNK_ID: chunk_id(key, 0),
                SentenceColumn.DOC_KEY: key,
                SentenceColumn.POSITION: i,
                SentenceColumn.TEXT: text[s:e],
                SentenceColumn.START: s,
                SentenceColumn.END: e,
            }
            for i, (s, e) in enumerate(spans)
        ]
        document_rows.append(
            {
                DocumentColumn.ID: f"synthetic-{number}",
                DocumentColumn.DOC_KEY: key,
                DocumentColumn.DOC_HASH: "-",
                DocumentColumn.PATH: f"synthetic/{number}",  # under no source: a sync leaves it
                DocumentColumn.CHUNKS: 1,
                DocumentColumn.SENTENCES: len(spans),
            }
        )
    return (
        pa.Table.from_pylist(chunk_rows, schema=chunks_schema()),
        sentence_rows_of(sentence_rows, perturbed(pool, len(sentence_rows), rng)),
        pa.Table.from_pylist(document_rows, schema=documents_schema()),
    )


def commit_synthetic(writer: IndexWriter, vector_index: dict | None, started: float) -> None:
    """Commit a synthetic index's manifest: the default model's settings and this code's splitter and
    sentence context, so that a command extends it as it would an index it built
    (bench/commit_cost.py edits one)."""
    counts = writer.tally.counts()
    embedding = {
        "model": "all-MiniLM-L6-v2",
        "embedding_backend": DEFAULT_BACKEND,
        "dimension": writer.dimension,
        "query_prompt": "",
        "document_prompt": "",
        "chunk_tokens": 1000,
        "sentence_tokens": 224,
        "splitter": SPLITTER_VERSION,
        "sentence_context": SENTENCE_CONTEXT,
    }
    record = Manifest.record(writer.uri, embedding=embedding)
    writer.commit(
        dataclasses.replace(
            record,
            vector_index=vector_index,
            built_at="synthetic",
            build_seconds=round(time.perf_counter() - started, 1),
        ),
        {},
    )
    log(
        f"wrote {Path(writer.uri).name}: {counts.chunks} chunks, {counts.sentences} sentences, "
        f"vector index {vector_index} ({time.perf_counter() - started:.0f} s)"
    )


def _current(manifest: dict) -> bool:
    """Whether a cached index was written the way this code writes it (format, backend, sentence
    context and splitter, vector search): a command refuses to extend one written otherwise."""
    vector_index = manifest.get("vector_index") or {}
    return (
        manifest.get("format_version") == FORMAT_VERSION
        and manifest.get("embedding_backend") == DEFAULT_BACKEND
        and manifest.get("sentence_context") == SENTENCE_CONTEXT
        and manifest.get("splitter") == SPLITTER_VERSION
        and all(
            vector_index.get(key, value) == value
            for key, value in vector_search(manifest.get("counts", {}).get("sentences", 0)).items()
        )
    )


def timed(call: Callable[[], object], repeat: Sequence) -> tuple[list[float], list]:
    times, results = [], []
    for item in repeat:
        started = time.perf_counter()
        results.append(call(item))
        times.append(time.perf_counter() - started)
    return times, results


def timed_in_turn(
    calls: dict[str, Callable[[object], object]], repeat: Sequence
) -> dict[str, tuple[list[float], list]]:
    """Each of `calls` on each item in turn (the order rotating from item to item), so that a change
    in the machine's load while the bench runs touches every call alike."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    results: dict[str, list] = {name: [] for name in calls}
    names = list(calls)
    for number, item in enumerate(repeat):
        for name in names[number % len(names) :] + names[: number % len(names)]:
            started = time.perf_counter()
            results[name].append(calls[name](item))
            times[name].append(time.perf_counter() - started)
    return {name: (times[name], results[name]) for name in names}


def stats(times: list[float]) -> dict[str, float]:
    return {"p50_ms": 1000 * float(np.median(times)), "p95_ms": 1000 * float(np.percentile(times, 95)), "n": len(times)}


def keyword_queries(chunks: list[tuple[str, str]], words: int, count: int) -> list[list[str]]:
    """Capitalised names that occur in the corpus, `words` per query, with a common word now and then."""
    rng = random.Random(words)
    names = sorted(
        {m for _, text in chunks[:2000] for m in re.findall(r"\b[A-Z][a-z]{3,}(?: [A-Z][a-z]{3,})?\b", text)}
    )
    queries = []
    for number in range(count):
        query = rng.sample(names, words)
        if number % 5 == 0:
            query[-1] = rng.choice(["river", "born", "film", "university"])
        queries.append(query)
    return queries


def bench_keyword(
    snapshot: IndexSnapshot, uri: Path, chunks: list[tuple[str, str]], reference_count: int | None = None
) -> dict:
    """Against brute force over every chunk held in memory (brute_force.py), on the first
    `reference_count` queries of each case (None: all up to 10k chunks, REFERENCE_QUERIES_ABOVE_10K
    above; 0: none): in substring mode the paper's code (lower-case and count), in word mode the
    whole-word definition; in word mode beside the anchors (keyword_anchors.py) too."""
    if reference_count is None:
        reference_count = QUERIES if snapshot.chunk_count <= 10_000 else REFERENCE_QUERIES_ABOVE_10K
    held = index_dump.all_chunks(snapshot)
    ids, titles, texts = [c.chunk_id for c in held], [c.title for c in held], [c.text for c in held]
    lengths = [c.tokens for c in held]
    del held
    log(f"{uri.name}: indexing the keyword anchors")
    anchors, notes = build_anchors(titles, texts, WORK / f"{uri.name}-anchors")
    word_corpus = WordCorpus(ids, titles, texts, lengths) if reference_count else None
    references = {
        "word": lambda q: word_corpus.ranking(q, 5),
        "substring": lambda q: keyword_ranking(ids, texts, q, 5),
    }
    gc.collect()
    gc.freeze()  # the references' millions of words are never collected: no collector pass over them is timed
    try:
        with keyword_tool(uri) as tool:
            results = {
                "anchors_built_s": {anchor.name: anchor.build_s for anchor in anchors},
                "anchor_notes": notes,
            }
            for match, reference in references.items():
                for words in (1, 2, 3):
                    queries = keyword_queries(chunks, words, QUERIES)
                    reference_queries = queries[:reference_count]
                    name = f"{words} keywords" + ("" if match == "word" else f" ({match})")
                    if match == "word":
                        case = keyword_side_by_side(snapshot, tool, anchors, queries, chunks)
                        ours = case.pop("scored")
                    else:
                        ours_t, found = timed(lambda q: keyword_search(snapshot, q, 5, match).hits, queries)
                        case = {"ours": stats(ours_t)}
                        ours = [[(h.chunk.chunk_id, h.score) for h in hits] for hits in found]
                    rankings = case.pop("rankings", None)
                    if not reference_queries:
                        results[name] = case
                        continue
                    ref_t, ref = timed(reference, reference_queries)
                    case |= {
                        "reference": stats(ref_t),
                        "speedup_p50": float(np.median(ref_t) * 1000 / case["ours"]["p50_ms"]),
                        "identical": f"{sum(o == r for o, r in zip(ours, ref))}/{len(ref)}",
                    }
                    if rankings is not None:
                        definition = [[cid for cid, _ in ranked] for ranked in ref]
                        case["top5_agreement_with_definition"] = top5_agreement(rankings, definition, ids)
                    results[name] = case
            return results
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def keyword_tool(uri: Path) -> Iterator[Callable[[list[str]], object]]:
    """The keyword_search tool as the server answers it, in process (no MCP round trip): its
    ranking, per-keyword counts, snippets and answer text, each call in a new conversation."""
    live = LiveIndex(str(uri))
    live.start(load_model=False)
    served = ServedIndex(live, Conversations())
    request = ServerRequestContext(session=None, lifespan_context=served, protocol_version="", method="tools/call")
    context = Context(request_context=request)  # what a tool reads of its call: the served index
    try:
        yield lambda keywords: KEYWORD_SEARCH.function(context, keywords, 5)
    finally:
        live.close()


KEYWORD_WARMUP = 5
"""Queries of 4 keywords each call answers before the timing (loads, caches, numba's compile)."""


def keyword_side_by_side(
    snapshot: IndexSnapshot,
    tool: Callable[[list[str]], object],
    anchors: Sequence[Anchor],
    queries: list[list[str]],
    chunks: list[tuple[str, str]],
) -> dict:
    """Whole-word keyword_search (the function; its ranking alone; the tool in process) and each
    anchor's ranking, timed in turn on each query, top 5. `rankings`: each call's chunk numbers,
    `scored`: keyword_search's (chunk id, score) pairs."""
    calls: dict[str, Callable[[list[str]], object]] = {
        "ranking_only": lambda q: our_ranking(snapshot, q, 5),
        "keyword_search": lambda q: keyword_search(snapshot, q, 5, "word"),
        "tool_call": tool,
    } | {anchor.name: lambda q, ranking=anchor.ranking: ranking(q, 5) for anchor in anchors}
    for query in keyword_queries(chunks, 4, KEYWORD_WARMUP):
        for call in calls.values():
            call(query)
    measured = timed_in_turn(calls, queries)
    findings = measured["keyword_search"][1]
    numbers = [[snapshot.catalogue.numbers_of([h.chunk.chunk_id])[0] for h in f.hits] for f in findings]
    rankings = {name: answers for name, (_, answers) in measured.items() if name not in ("keyword_search", "tool_call")}
    return {
        "ours": stats(measured["keyword_search"][0]),
        **{name: stats(times) for name, (times, _) in measured.items() if name != "keyword_search"},
        "ranking_only_same_as_keyword_search": f"{sum(a == b for a, b in zip(rankings['ranking_only'], numbers))}"
        f"/{len(queries)}",
        "top5_agreement_with_ours": {
            name: _overlap(answers, numbers) for name, answers in rankings.items() if name != "ranking_only"
        },
        "rankings": rankings,
        "scored": [[(h.chunk.chunk_id, h.score) for h in f.hits] for f in findings],
    }


def _overlap(answers: list[list[int]], wanted: list[list[int]]) -> float:
    """The mean share of each wanted top 5 that the answer's top 5 holds (queries with none wanted left out)."""
    shares = [len(set(a) & set(w)) / len(w) for a, w in zip(answers, wanted) if w]
    return round(float(np.mean(shares)), 3) if shares else float("nan")


def top5_agreement(rankings: dict[str, list[list[int]]], definition: list[list[str]], ids: list[str]) -> dict:
    """Each call's top 5 against brute_force.py's definition, on the queries the reference answered."""
    number_of = {cid: at for at, cid in enumerate(ids)}
    wanted = [[number_of[cid] for cid in ranked] for ranked in definition]
    return {name: _overlap(answers[: len(wanted)], wanted) for name, answers in rankings.items()}


def bench_semantic(snapshot: IndexSnapshot, embedder: Embedder, questions: list[str], warmup: list[str]) -> dict:
    """Timed after searching the `warmup` questions once: the index's first loads are not search time
    (the server figures show them as time to first answer)."""
    for vector in embedder.encode_queries(warmup):
        retrieval.semantic_search(snapshot, vector, 10)
    embed_t, vectors = timed(lambda q: embedder.encode_queries([q])[0], questions)
    matrix = SentenceMatrix(*index_dump.sentence_vectors(snapshot))
    pool = retrieval.candidate_pool(10)
    measured = timed_in_turn(
        {
            "ours": lambda v: retrieval.semantic_search(snapshot, v, 10),
            "nearest": lambda v: snapshot.sentences.nearest(v, pool),
            "reference": lambda v: [cid for cid, _ in matrix.best_sentence_ranking(v, 10)],
        },
        vectors,
    )
    (ours_t, ours), (nearest_t, _), (ref_t, ref) = measured["ours"], measured["nearest"], measured["reference"]
    result = {
        "sentences": len(matrix.owners),
        "vector_index": snapshot.manifest.vector_index,
        "exact_in_memory": snapshot.sentences.in_memory is not None,
        "query_embedding": stats(embed_t),
        "search": stats(ours_t),
        "nearest_sentences": stats(nearest_t),
        "reference_numpy": stats(ref_t),
        "speedup_p50": float(np.median(ref_t) / np.median(ours_t)),
        "recall@10_vs_exact": recall_at_10(ours, ref),
    }
    if snapshot.sentences.in_memory is None and len(matrix.owners) <= EXACT_COMPARISON_MAX_ROWS:
        in_memory = SentenceVectors(
            snapshot.sentences.table, snapshot.chunks.table, snapshot.catalogue, snapshot.manifest, None
        )
        in_memory.load()
        exact = snapshot.replaced(sentences=dataclasses.replace(snapshot.sentences, in_memory=in_memory))
        exact_t, exact_hits = timed(lambda v: retrieval.semantic_search(exact, v, 10), vectors)
        result["exact_in_memory_search"] = stats(exact_t)
        result["exact_in_memory_recall@10"] = recall_at_10(exact_hits, ref)
    return result


def recall_at_10(hits: list[list[retrieval.Hit]], exact: list[list[str]]) -> float:
    return float(np.mean([len({h.chunk.chunk_id for h in o} & set(r)) / 10 for o, r in zip(hits, exact)]))


def bench_chunk_read(snapshot) -> dict:
    ids = snapshot.catalogue.chunk_ids[:1000].to_pylist()
    rng = random.Random(0)
    requests = [rng.sample(ids, rng.randint(1, 3)) for _ in range(QUERIES)]
    times, _ = timed(snapshot.chunks.by_id, requests)
    return stats(times)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


STARTS = 10


def bench_startup(pythons: Sequence[str], index: Path | None = None) -> dict:
    """Start-up of the arag-mcp each Python runs (this checkout's, or other checkouts' environments
    to compare revisions), on `index`, or on the bundled sample indexed by that same arag-mcp. Each
    figure is a median of STARTS fresh processes, the Pythons taken in turn within each round so
    that a change in the machine's load touches all alike: the SDK's own import (`import
    mcp.server.mcpserver`, the floor any MCP server pays), `arag-mcp --version`, and the time from
    spawning `arag-mcp --index` to its answer to `initialize`, then to `tools/list`, then to a first
    `keyword_search`, over stdio with JSON-RPC written by hand (no client library in the way)."""
    sample = Path(__file__).resolve().parents[1] / "examples" / "sample"
    times: dict[str, dict[str, list[float]]] = {python: defaultdict(list) for python in pythons}
    with tempfile.TemporaryDirectory() as folder:
        indexes = {python: index or Path(folder) / f"idx-{number}" for number, python in enumerate(pythons)}
        for python, built in indexes.items():
            if index is None:
                build = [python, "-m", "arag_mcp.indexer", "build", str(sample), "--index", str(built), "--quiet"]
                subprocess.run(build, check=True, capture_output=True)
        for _ in range(STARTS):
            for python, served in indexes.items():
                taken = times[python]
                taken["sdk_import_floor_s"].append(_run_time([python, "-c", "import mcp.server.mcpserver"]))
                taken["version_s"].append(_run_time([python, "-m", "arag_mcp.server", "--version"]))
                initialized, listed, searched = _handshake_times(python, served)
                taken["initialize_s"].append(initialized)
                taken["tools_list_s"].append(listed)
                taken["first_keyword_search_s"].append(searched)
    results = {}
    for python, taken in times.items():
        medians = {name: statistics.median(values) for name, values in taken.items()}
        medians["initialize_over_floor_s"] = medians["initialize_s"] - medians["sdk_import_floor_s"]
        results[python] = medians
    return results


def _run_time(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def _handshake_times(python: str, uri: Path) -> tuple[float, float, float]:
    """Seconds from spawn to the `initialize` answer, to the `tools/list` answer and to a first
    `keyword_search` answer."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "keyword_search", "arguments": {"keywords": ["University"]}},
        },
    ]
    started = time.perf_counter()
    server = subprocess.Popen(
        [python, "-m", "arag_mcp.server", "--index", str(uri)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdin and server.stdout
        server.stdin.write(json.dumps(messages[0]) + "\n")
        server.stdin.flush()
        json.loads(server.stdout.readline())
        initialized = time.perf_counter() - started
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages[1:3]))
        server.stdin.flush()
        listed = json.loads(server.stdout.readline())
        assert listed["result"]["tools"], listed
        listed_at = time.perf_counter() - started
        server.stdin.write(json.dumps(messages[3]) + "\n")
        server.stdin.flush()
        found = json.loads(server.stdout.readline())
        assert not found["result"].get("isError"), found
        return initialized, listed_at, time.perf_counter() - started
    finally:
        server.kill()
        server.wait()


async def bench_server(uri: Path, chunks: list[tuple[str, str]], questions: list[str]) -> dict:
    """The real server over stdio: start-up, first answers, round trips, peak RSS."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    started = time.perf_counter()
    params = StdioServerParameters(command=sys.executable, args=["-m", "arag_mcp.server", "--index", str(uri)])
    result: dict = {}
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), mode="legacy") as client:
            result["initialize_s"] = time.perf_counter() - started
            found = await client.call_tool("keyword_search", {"keywords": ["University"]})
            result["first_keyword_search_s"] = time.perf_counter() - started
            some_id = found.structured_content["results"][0]["chunk_id"]
            await client.call_tool("chunk_read", {"chunk_ids": [some_id]})
            result["first_chunk_read_s"] = time.perf_counter() - started
            await client.call_tool("semantic_search", {"query": questions[0]})
            result["first_semantic_search_s"] = time.perf_counter() - started
            pid = _server_pid(uri)
            for name, calls in {
                "keyword_search": [{"keywords": q} for q in keyword_queries(chunks, 3, QUERIES)],
                "semantic_search": [{"query": q} for q in questions[:QUERIES]],
            }.items():
                times = []
                for arguments in calls:
                    begin = time.perf_counter()
                    await client.call_tool(name, arguments)
                    times.append(time.perf_counter() - begin)
                result[f"{name}_round_trip"] = stats(times)
            result["peak_rss_mb"] = peak_rss_mb(pid) if pid else None
    return result


def _server_pid(uri: Path) -> int | None:
    found = subprocess.run(
        ["pgrep", "-f", f"arag_mcp.server --index {uri}"], capture_output=True, text=True
    ).stdout.split()
    return int(found[-1]) if found else None


def bench_build(data: Path, quick: bool, backend: str) -> dict:
    """A real `arag-index build --backend` of a shared corpus: throughput and the indexer's peak RSS."""
    corpus = data / "musique" / "corpus.jsonl"
    if quick:
        corpus = WORK / "build-slice.jsonl"
        corpus.write_text(
            "".join(json.dumps(r) + "\n" for r in list(read_jsonl(data / "musique" / "corpus.jsonl"))[:300])
        )
    uri = WORK / "build-idx"
    command = [
        sys.executable,
        "-m",
        "arag_mcp.indexer",
        "build",
        str(corpus),
        "--index",
        str(uri),
        "--rebuild",
        "--quiet",
        "--backend",
        backend,
    ]
    Embedder(backend=backend).load()  # a first ONNX export happens here, not in the timed build
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while process.poll() is None:
        peak = max(peak, peak_rss_mb(process.pid) if Path(f"/proc/{process.pid}").exists() else 0.0)
        time.sleep(0.2)
    summary = process.stderr.read().strip().splitlines()[-1]
    rate = re.search(r"\(([\d.]+) sentences/s while embedding\)", summary)
    return {
        "backend": backend,
        "corpus": corpus.name,
        "summary": summary,
        "sentences_per_s": float(rate.group(1)) if rate else None,
        "peak_rss_mb": peak,
    }


def print_semantic_summary(results: dict) -> None:
    """One line per index size: semantic search, ours against the reference, and the server's memory."""
    print("\nsentences  search p50/p95 ms  reference p50/p95 ms  recall@10  exact  server peak RSS MB")
    for name, result in results.items():
        if not isinstance(result, dict) or "semantic_search" not in result:
            continue
        semantic, rss = result["semantic_search"], result.get("server", {}).get("peak_rss_mb", float("nan"))
        print(
            f"{semantic['sentences']:>9,}  {semantic['search']['p50_ms']:7.2f} / {semantic['search']['p95_ms']:<7.2f}"
            f"  {semantic['reference_numpy']['p50_ms']:9.2f} / {semantic['reference_numpy']['p95_ms']:<8.2f}"
            f"  {semantic['recall@10_vs_exact']:9.3f}  {'yes' if semantic['exact_in_memory'] else 'no':>5}"
            f"  {rss:18.0f}"
        )


KEYWORD_COLUMNS = {
    "ranking_only": "ours, ranking",
    "ours": "keyword_search",
    "tool_call": "tool call",
    "bm25s": "bm25s",
    "bm25s_numba": "bm25s numba",
    "lancedb_fts": "LanceDB FTS",
}
"""The side-by-side's columns: results key to heading."""


def print_keyword_table(sizes: dict[str, dict]) -> None:
    """Whole-word keyword_search beside the anchors, per index size (`sizes`: name to its keyword
    results) and keyword count: p50 / p95 ms, then each one's top-5 agreement with our BM25
    definition where the reference ran (else with keyword_search)."""
    print(
        "\nkeyword_search beside the anchors, top 5, p50 / p95 ms (top-5 agreement with our BM25 definition; "
        "where no reference ran, with keyword_search)"
    )
    print(f"{'index':<16}{'keywords':>9}" + "".join(f"{heading:>19}" for heading in KEYWORD_COLUMNS.values()))
    for name, cases in sizes.items():
        for words in (1, 2, 3):
            case = cases.get(f"{words} keywords")
            if case is None:
                continue
            agreement = case.get("top5_agreement_with_definition") or case.get("top5_agreement_with_ours", {})
            times = [
                f"{case[key]['p50_ms']:.2f} / {case[key]['p95_ms']:.2f}" if key in case else "-"
                for key in KEYWORD_COLUMNS
            ]
            shares = [f"({agreement[key]:.2f})" if key in agreement else "" for key in KEYWORD_COLUMNS]
            print(f"{name:<16}{words:>9}" + "".join(f"{t:>19}" for t in times))
            print(f"{'':<25}" + "".join(f"{s:>19}" for s in shares))
        for note in cases.get("anchor_notes", []):
            print(f"{name}: {note}")


def _label(count: int) -> str:
    return f"{count // 1_000_000}m" if count % 1_000_000 == 0 else f"{count // 1000}k"


PARTS = ("startup", "keyword", "semantic", "server", "build")
"""startup: imports and handshake of a fresh server (on the smallest index); keyword: keyword_search
and chunk_read; semantic: semantic_search; server: an MCP server over stdio (start, first answers,
memory); build: the indexer's build rate, each embedding backend."""


def bench_sizes(args: argparse.Namespace, results: dict) -> None:
    """The keyword, semantic and server parts on each synthetic index size, written as they finish."""
    embedder = Embedder().load()
    records = passages(args.data)
    musique = [q["question"] for q in read_jsonl(args.data / "musique" / "questions.jsonl")]
    questions, warmup = musique[:SEMANTIC_QUERIES], musique[SEMANTIC_QUERIES : SEMANTIC_QUERIES + QUERIES]
    pool = vector_pool(embedder, records)
    sizes = sorted(args.chunks or ([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]))
    for count in sizes:
        name = f"chunks-{_label(count)}"
        chunks = synthetic_chunks(records, count)
        write_index(WORK / name, chunks, 10, pool)
        snapshot = open_index(str(WORK / name))
        results[name] = {}
        if "keyword" in args.parts:
            log(f"{name}: keyword_search and chunk_read")
            results[name] |= {
                "keyword_search": bench_keyword(snapshot, WORK / name, chunks, args.reference_queries),
                "chunk_read": bench_chunk_read(snapshot),
            }
        if "semantic" in args.parts:
            log(f"{name}: semantic_search")
            results[name]["semantic_search"] = bench_semantic(snapshot, embedder, questions, warmup)
        del snapshot
        if "server" in args.parts:
            log(f"{name}: MCP server over stdio")
            results[name]["server"] = anyio.run(bench_server, WORK / name, chunks, questions)
        write_json(args.out, results)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--quick", action="store_true", help="1k and 10k chunks (10k, 100k sentences) only")
    parser.add_argument(
        "--chunks", type=int, nargs="+", default=None, help="chunk-index sizes (default: 1000 10000 100000)"
    )
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS), help="what to measure (default: all)")
    parser.add_argument(
        "--server-python",
        nargs="+",
        default=[sys.executable],
        help="startup: the Pythons whose arag-mcp is started (other checkouts' environments, to compare revisions)",
    )
    parser.add_argument(
        "--startup-index",
        type=Path,
        default=None,
        help="startup: serve this index (default: the bundled sample, indexed by each Python's arag-index)",
    )
    parser.add_argument(
        "--reference-queries",
        type=int,
        default=None,
        help="keyword queries per case the brute-force reference answers (default: all up to 10k chunks, "
        f"{REFERENCE_QUERIES_ABOVE_10K} above; 0: none, the anchors' agreement is then with keyword_search)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "speed.json")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"no benchmark data at {args.data}; pass --data", file=sys.stderr)
        return 2
    WORK.mkdir(parents=True, exist_ok=True)
    results: dict = {"quick": args.quick, "vectors": "real embeddings of 4,096 sentences, reused with noise"}
    if "startup" in args.parts:
        log(f"server start-up ({args.server_python})")
        results["startup"] = bench_startup(args.server_python, args.startup_index)
        write_json(args.out, results)
    if {"keyword", "semantic", "server"} & set(args.parts):
        bench_sizes(args, results)
    if "build" in args.parts:
        log("indexer build, each embedding backend")
        builds = {backend: bench_build(args.data, args.quick, backend) for backend in BACKENDS}
        for build in builds.values():
            build["speedup_vs_torch"] = build["sentences_per_s"] / builds["torch"]["sentences_per_s"]
        results["build"] = builds
    print(json.dumps(results, indent=2))
    print_semantic_summary(results)
    print_keyword_table(
        {
            name: result["keyword_search"]
            for name, result in results.items()
            if isinstance(result, dict) and "keyword_search" in result
        }
    )
    write_json(args.out, results)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
