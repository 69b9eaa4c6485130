"""Where keyword_search spends its time: shares of its stages, for 1, 2 and 3 keywords, on an index speed.py wrote.

The tool call in process (the keyword_search tool's function, server/tools/keyword_search.py: the ranking, per-keyword counts, matched sentences,
snippets, the answer) is sampled by pyinstrument over the queries speed.py times, a few rounds; each
sample goes to the innermost stage on its stack (STAGES; "other": none). The same queries go to the
real server over stdio, each in turn with the call in process: the CPU time a round trip takes
(the server's and the client's) beyond the call's in process (the SDK's JSON-RPC, validation and
the pipe) is the MCP share; the stages share the rest in the proportions sampled. CPU times,
since on a shared machine the wall times mostly measure the load.

    python bench/keyword_profile.py                 # chunks-100k
    python bench/keyword_profile.py --chunks 10000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH_DATA, RESULTS, log, write_json  # noqa: E402
from speed import (  # noqa: E402
    QUERIES,
    WORK,
    _label,
    _server_pid,
    keyword_queries,
    keyword_tool,
    passages,
    synthetic_chunks,
)

STAGES: dict[tuple[str, str], str] = {
    ("", "checked_keywords"): "keyword checks and folding",
    ("WordMatch", "keywords"): "keyword checks and folding",
    ("", "_as_written_or_by_words"): "marked keywords as written",
    ("PieceCounts", "__init__"): "postings",
    ("KeywordLookup", "rows_of_word"): "postings",
    ("KeywordLookup", "title_counts"): "postings",
    ("", "folded"): "folding the postings' words",
    ("PieceCounts", "of"): "counts from postings",
    ("", "_phrase_bound"): "counts from postings",
    ("CountsByChunk", "plus"): "counts from postings",
    ("CountsByChunk", "minimum"): "counts from postings",
    ("CountsByChunk", "at"): "counts from postings",
    ("", "union"): "counts from postings",
    ("WordMatch", "titled_pages"): "titled pages",
    ("_ExactTopK", "read"): "phrase checks (texts read)",
    ("_ExactTopK", "_scored"): "scoring",
    ("RarityWeights", "score"): "scoring",
    ("", "top_chunks"): "top-k and order",
    ("_ExactTopK", "settle_top"): "top-k and order",
    ("_ExactTopK", "best_chunk"): "top-k and order",
    ("_Order", "__init__"): "top-k and order",
    ("_Order", "settle_named"): "top-k and order",
    ("_Order", "top"): "top-k and order",
    ("_Order", "sorted"): "top-k and order",
    ("_Order", "best_of"): "top-k and order",
    ("_ExactTopK", "chunk_counts"): "per-keyword chunk counts",
    ("ChunkReader", "at"): "chunk rows read",
    ("WordMatch", "matching_sentences"): "matched sentences",
    ("ChunkCatalogue", "headers_at"): "headers",
    ("", "nothing_new"): "already-sent check",
    ("", "sent_snippets"): "snippets",
    ("", "keyword_output"): "answer (model and text)",
    ("", "tool_result"): "answer (model and text)",
}
"""(class, function) of a frame to the stage its time belongs to; the innermost one on a stack wins."""
TOOL_FILE = os.path.join("tools", "keyword_search.py")
"""Where the tool's function is: the keyword engine's function has its name too."""
MCP = "MCP round trip (stdio)"
ROUNDS = 3


def stage_times(root, stages: dict[tuple[str, str], str]) -> dict[str, float]:
    """Seconds sampled per stage below the frames of the keyword_search tool's function."""
    times: dict[str, float] = defaultdict(float)

    def walk(frame, stage: str | None) -> None:
        stage = stages.get((frame.class_name or "", frame.function), stage)
        own = frame.time - sum(child.time for child in frame.children)
        times[stage or "other"] += own
        for child in frame.children:
            walk(child, stage)

    def calls(frame):
        if frame.function == "keyword_search" and (frame.file_path or "").endswith(TOOL_FILE):
            yield frame
            return
        for child in frame.children:
            yield from calls(child)

    for call in calls(root):
        walk(call, None)
    return dict(times)


def profile(uri: Path, queries: list[list[str]]) -> dict[str, float]:
    """Sampled seconds per stage over ROUNDS rounds of the queries."""
    from pyinstrument import Profiler

    with keyword_tool(uri) as tool:
        for query in queries[:5]:
            tool(query)
        profiler = Profiler(interval=0.0002)
        profiler.start()
        for _ in range(ROUNDS):
            for query in queries:
                tool(query)
        profiler.stop()
    return stage_times(profiler.last_session.root_frame(), STAGES)


def texts_read(uri: Path, queries: list[list[str]]) -> float:
    """How many chunk texts a search reads, on average, to count its keywords of several words in
    them (the word matcher's `count_in`, counted as it runs)."""
    from arag_mcp.indexer import open_index
    from arag_mcp.indexer.index.keywords.search import MATCHERS, keyword_search

    snapshot, matcher, read = open_index(str(uri)), MATCHERS["word"], []

    def counted(snapshot, numbers, keywords):  # noqa: ANN001, ANN202 - the matcher's own signature
        read.append(len(numbers))
        return original(snapshot, numbers, keywords)

    original, matcher.count_in = matcher.count_in, counted
    try:
        for query in queries:
            keyword_search(snapshot, query, 5)
    finally:
        del matcher.count_in
    return sum(read) / len(queries)


async def call_times(uri: Path, cases: dict[int, list[list[str]]]) -> dict[int, dict[str, float]]:
    """Per keyword count, the tool call in process and its round trip to the real server over stdio,
    the two in turn on each query (the order alternating): their median wall times (ms), and their
    mean CPU times (ms): this process's for the call in process, the server's and this client's for
    the round trip. On a loaded machine the CPU times tell what the round trip adds; the wall
    times mostly tell the load."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "arag_mcp.server", "--index", str(uri)])
    results = {}
    with open(os.devnull, "w") as quiet, keyword_tool(uri) as tool:
        async with Client(stdio_client(params, errlog=quiet), mode="legacy") as client:
            for query in cases[3][:5]:
                tool(query)
                await client.call_tool("keyword_search", {"keywords": query})
            server = _server_pid(uri)
            for words, queries in cases.items():
                wall: dict[bool, list[float]] = {True: [], False: []}
                cpu: dict[bool, float] = {True: 0.0, False: 0.0}
                for number, query in enumerate(queries * ROUNDS):
                    for local in (True, False) if number % 2 else (False, True):
                        started, used = time.perf_counter(), time.process_time() + (0 if local else _cpu_s(server))
                        if local:
                            tool(query)
                        else:
                            await client.call_tool("keyword_search", {"keywords": query})
                        wall[local].append(time.perf_counter() - started)
                        cpu[local] += time.process_time() + (0 if local else _cpu_s(server)) - used
                calls = len(queries) * ROUNDS
                results[words] = {
                    "in_process_ms": 1000 * float(np.median(wall[True])),
                    "round_trip_ms": 1000 * float(np.median(wall[False])),
                    "in_process_cpu_ms": 1000 * cpu[True] / calls,
                    "round_trip_cpu_ms": 1000 * cpu[False] / calls,
                }
    return results


def _cpu_s(pid: int) -> float:
    """CPU seconds (user and system, all threads) process `pid` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def shares(sampled: dict[str, float], in_process_ms: float, round_trip_ms: float) -> dict[str, float]:
    """Each stage's share of the round trip (CPU times): the MCP share first, the stages splitting the rest as sampled."""
    mcp = max(round_trip_ms - in_process_ms, 0.0) / round_trip_ms
    total = sum(sampled.values())
    return {MCP: mcp} | {stage: (1 - mcp) * seconds / total for stage, seconds in sampled.items()}


def print_table(results: dict) -> None:
    stages = sorted({stage for case in results["cases"].values() for stage in case["shares"]})
    order = sorted(stages, key=lambda stage: -results["cases"]["1"]["shares"].get(stage, 0))
    print(
        "\n| stage | "
        + " | ".join(f"{words} keyword{'s' if words != '1' else ''}" for words in results["cases"])
        + " |"
    )
    print("|---|" + "---|" * len(results["cases"]))
    for stage in order:
        cells = [f"{100 * case['shares'].get(stage, 0):.1f}%" for case in results["cases"].values()]
        print(f"| {stage} | " + " | ".join(cells) + " |")
    for label, key in (
        ("in process, CPU ms (mean)", "in_process_cpu_ms"),
        ("round trip, CPU ms of server and client (mean)", "round_trip_cpu_ms"),
        ("in process, wall ms (p50)", "in_process_ms"),
        ("round trip, wall ms (p50)", "round_trip_ms"),
        ("chunk texts read to count keywords of several words (mean per search)", "texts_read_per_search"),
    ):
        print(f"| {label} | " + " | ".join(f"{case[key]:.1f}" for case in results["cases"].values()) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--chunks", type=int, default=100_000, help="the chunks-N index speed.py wrote")
    parser.add_argument("--out", type=Path, default=RESULTS / "keyword_profile.json")
    args = parser.parse_args(argv)
    uri = WORK / f"chunks-{_label(args.chunks)}"
    if not (uri / "manifest.json").exists() and not uri.exists():
        print(f"no {uri}: run `python bench/speed.py --chunks {args.chunks} --parts keyword` first", file=sys.stderr)
        return 2
    chunks = synthetic_chunks(passages(args.data), min(args.chunks, 2000))  # the queries are names in the first 2,000
    cases = {words: keyword_queries(chunks, words, QUERIES) for words in (1, 2, 3)}
    results: dict = {"index": uri.name, "rounds": ROUNDS, "cases": {}}
    log(f"{uri.name}: the tool in process and over stdio, in turn")
    times = anyio.run(call_times, uri, cases)
    for words, queries in cases.items():
        log(f"{uri.name}: profiling {words} keyword(s)")
        sampled = profile(uri, queries)
        case = times[words]
        results["cases"][str(words)] = case | {
            "texts_read_per_search": texts_read(uri, queries),
            "sampled_s": sampled,
            "shares": shares(sampled, case["in_process_cpu_ms"], case["round_trip_cpu_ms"]),
        }
        write_json(args.out, results)
    print_table(results)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
