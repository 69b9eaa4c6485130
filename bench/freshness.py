"""Freshness: how soon a saved file is searchable through a real `arag-mcp --watch`, and what
keeping an index current costs.

    python bench/freshness.py                                     # the full run (about an hour)
    python bench/freshness.py --edits 20 --idle-seconds 60 --tree-files 2000 --burst 200   # shorter

On the MuSiQue corpus written as one Markdown file per passage (3,141 files), indexed once and
cached in bench/results/work/freshness/:
- no-change sync: `arag-index sync` with nothing changed, as a process (wall time) and in-process;
- edits: a unique word written into one file (a write, or an editor's atomic save: a hidden file
  renamed over it), then keyword_search through the server until it finds it; the time from the
  save is the latency (p50, p95). The server looks for a new build at most every 2 s, which counts.
  The RSS of the server and of its watcher after each edit's batch gives their growth per batch;
- idle: the CPU time of the server and its watcher over a period with no change, as a share of
  one core; again with a tree of `--tree-files` one-sentence files watched;
- burst: `--burst` files changed at once (a branch switch); the time until every change is
  searchable, the batches it took, and that no document is lost or duplicated.
`--synthetic-chunks N` times the edits alone, of a folder of 100 notes added to a synthetic index of
N chunks of ~1,000 tokens (bench/speed.py's, 10 sentences each; written once and cached in
bench/results/work/synthetic-N/): the latency at sizes a build here could not embed in time;
`--index PATH` does so beside a synthetic index already written (bench/scale.py's 1M chunks).
Results are written to bench/results/freshness.json as each part ends. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from common import BENCH_DATA, RESULTS, log, read_jsonl
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

WORK = RESULTS / "work" / "freshness"
OUTPUT = RESULTS / "freshness.json"
"""Written anew by each run (--output names another file)."""
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def write_corpus(folder: Path) -> None:
    """One Markdown file per MuSiQue passage, 100 to a folder."""
    for number, record in enumerate(read_jsonl(BENCH_DATA / "musique" / "corpus.jsonl")):
        path = folder / f"part-{number // 100:02}" / f"passage-{number:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {record['title']}\n\n{record['text']}\n", encoding="utf-8")


def write_tree(folder: Path, files: int) -> None:
    """`files` one-sentence notes, 200 to a folder."""
    for number in range(files):
        path = folder / f"shelf-{number // 200:03}" / f"note-{number:05}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Note {number} records shelf {number // 200}.\n")


def prepared(name: str, write: callable) -> tuple[Path, Path]:  # type: ignore[valid-type]
    """(sources, index), built once and cached."""
    sources, index = WORK / name / "docs", WORK / name / "idx"
    if not (index / "manifest.json").exists():
        shutil.rmtree(WORK / name, ignore_errors=True)
        write(sources)
        log(f"building {index}")
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "arag_mcp.indexer", "build", str(sources), "--index", str(index)], check=True
        )
        log(f"built in {time.perf_counter() - started:.0f} s")
    return sources, index


def synthetic(count: int) -> tuple[Path, Path]:
    """(notes folder, index): a synthetic index of `count` chunks with a folder of 100 notes added to it."""
    from arag_mcp.indexer import Embedder, read_manifest
    from speed import _current, passages, synthetic_chunks, vector_pool, write_index

    folder = RESULTS / "work" / f"synthetic-{count}"
    sources, index = folder / "docs", folder / "idx"
    manifest = read_manifest(str(index))
    if not manifest or not _current(manifest):
        records = passages(BENCH_DATA)
        log(f"writing a synthetic index of {count} chunks")
        write_index(index, synthetic_chunks(records, count), 10, vector_pool(Embedder().load(), records))
        shutil.rmtree(sources, ignore_errors=True)  # the notes go into the index written anew
    return with_notes(index, sources), index


def beside(index: Path) -> tuple[Path, Path]:
    """(notes folder, index): 100 notes added to a synthetic index already written (bench/scale.py's),
    from a folder beside it. The paths are absolute, as a watcher's are: an edit's path is looked
    up among the index's recorded sources, which are."""
    index = index.resolve()
    return with_notes(index, index.with_name(f"{index.name}-notes")), index


def with_notes(index: Path, sources: Path) -> Path:
    """`sources`, a folder of 100 MuSiQue notes, added to `index` (a synthetic one: bench/speed.py's
    or bench/scale.py's) unless it is there already."""
    from arag_mcp.indexer import BuildOptions, Index
    from speed import passages

    if not sources.is_dir():
        sources.mkdir(parents=True)
        for number, record in enumerate(passages(BENCH_DATA)[:100]):
            (sources / f"note-{number:03d}.md").write_text(f"# {record['title']}\n\n{record['text']}\n")
        Index(str(index)).add([sources], BuildOptions(progress=False))
    return sources


def no_change_sync(index: Path) -> dict:
    from arag_mcp.indexer import BuildOptions, Index

    command = [sys.executable, "-m", "arag_mcp.indexer", "sync", "--index", str(index), "--quiet"]
    subprocess.run(command, check=True, capture_output=True)  # catches up after an earlier run's edits
    walls = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
    inside = []
    for _ in range(5):
        started = time.perf_counter()
        summary = Index(str(index)).sync(BuildOptions(progress=False))
        inside.append(time.perf_counter() - started)
    assert summary.embedded_sentences == 0
    return {
        "files": summary.documents,
        "process_seconds_median": round(statistics.median(walls), 3),
        "in_process_seconds_median": round(statistics.median(inside), 3),
    }


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def children(pid: int) -> list[int]:
    return [
        int(child) for task in Path(f"/proc/{pid}/task").iterdir() for child in (task / "children").read_text().split()
    ]


def growth_per_step(values: list[float]) -> float:
    """Least-squares slope of `values` against their index."""
    count = len(values)
    mean_x, mean_y = (count - 1) / 2, sum(values) / count
    spread = sum((x - mean_x) ** 2 for x in range(count))
    return sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values)) / spread if spread else 0.0


class Server:
    """A real `arag-mcp --watch` over stdio, and the pids of it and of its watcher."""

    def __init__(self, client: Client, log_path: Path) -> None:
        self.client = client
        self.log_path = log_path
        self.pid = 0
        self.watcher = 0

    async def state(self) -> dict:
        resource = await self.client.read_resource("arag://index")
        return json.loads(resource.contents[0].text)

    async def wait_watching(self, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while (await self.state())["watcher"]["state"] != "watching":
            if time.monotonic() > deadline:
                raise RuntimeError(f"the watcher did not start; see {self.log_path}")
            await anyio.sleep(0.5)
        me = os.getpid()
        self.pid = next(
            child for child in children(me) if b"arag_mcp.server" in Path(f"/proc/{child}/cmdline").read_bytes()
        )
        self.watcher = children(self.pid)[0]

    async def found(self, word: str) -> list:
        result = await self.client.call_tool("keyword_search", {"keywords": [word], "top_k": 20})
        return result.structured_content["results"] if not result.is_error else []

    def batches(self) -> int:
        return sum(1 for line in self.log_path.read_text().splitlines() if " watch: +" in line)

    def cpu(self) -> float:
        return cpu_seconds(self.pid) + cpu_seconds(self.watcher)


def server_client(index: Path, log_file) -> Client:  # noqa: ANN001 - a text file
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "arag_mcp.server", "--index", str(index), "--watch"], env=dict(os.environ)
    )
    return Client(stdio_client(params, errlog=log_file))


def save(path: Path, text: str, atomic: bool) -> None:
    if atomic:
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    else:
        path.write_text(text, encoding="utf-8")


async def edits(server: Server, sources: Path, count: int) -> dict:
    files = sorted(sources.rglob("*.md"))
    chooser = random.Random(7)
    latencies, server_rss, watcher_rss = [], [], []
    for number in range(count):
        path = chooser.choice(files)
        word = f"freshword{number:04}x{os.getpid()}"
        text = path.read_text(encoding="utf-8")
        started = time.perf_counter()
        save(path, text.rstrip("\n") + f" It mentions {word}.\n", atomic=number % 2 == 1)
        while not await server.found(word):
            if time.perf_counter() - started > 120:
                raise RuntimeError(f"{word} was not searchable after 120 s")
            await anyio.sleep(0.05)
        latencies.append(time.perf_counter() - started)
        server_rss.append(rss_mb(server.pid))
        watcher_rss.append(rss_mb(server.watcher))
        log(f"edit {number + 1}/{count}: searchable after {latencies[-1]:.2f} s")
    ordered = sorted(latencies)
    return {
        "edits": count,
        "latency_p50_s": round(statistics.median(ordered), 2),
        "latency_p95_s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "latency_max_s": round(ordered[-1], 2),
        "server_rss_mb": [round(server_rss[0], 1), round(server_rss[-1], 1)],
        "server_rss_mb_per_batch": round(growth_per_step(server_rss[len(server_rss) // 4 :]), 3),
        "watcher_rss_mb": [round(watcher_rss[0], 1), round(watcher_rss[-1], 1)],
        "watcher_rss_mb_per_batch": round(growth_per_step(watcher_rss[len(watcher_rss) // 4 :]), 3),
    }


async def idle(server: Server, seconds: float) -> dict:
    await anyio.sleep(5)  # the last batch's reload settles
    before, started = server.cpu(), time.perf_counter()
    await anyio.sleep(seconds)
    used, elapsed = server.cpu() - before, time.perf_counter() - started
    return {
        "seconds": round(elapsed),
        "cpu_seconds": round(used, 2),
        "share_of_a_core_percent": round(100 * used / elapsed, 2),
    }


async def burst(server: Server, sources: Path, count: int, index: Path) -> dict:
    from arag_mcp.indexer import list_documents

    files = sorted(sources.rglob("*.md"))[:count]
    before_batches, before_documents = server.batches(), len(list_documents(str(index)))
    word = f"branchword{os.getpid()}"
    started = time.perf_counter()
    for path in files:
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f" Switched {word}.\n", encoding="utf-8")
    while len(await server.found(word)) < min(count, 20):
        if time.perf_counter() - started > 1800:
            raise RuntimeError("the burst was not searchable after 30 minutes")
        await anyio.sleep(0.5)
    while True:  # every changed file's document holds the word
        documents = list_documents(str(index))
        if sum(1 for _ in documents) == before_documents and _holding(index, word) == count:
            break
        if time.perf_counter() - started > 1800:
            raise RuntimeError("the burst did not land whole after 30 minutes")
        await anyio.sleep(1)
    elapsed = time.perf_counter() - started
    ids = [document["doc_id"] for document in documents]
    return {
        "files": count,
        "seconds_until_all_searchable": round(elapsed, 1),
        "batches": server.batches() - before_batches,
        "documents_before_after": [before_documents, len(ids)],
        "duplicated": len(ids) - len(set(ids)),
    }


def _holding(index: Path, word: str) -> int:
    from arag_mcp.indexer import open_index

    chunks = open_index(str(index)).chunks.table.to_pandas()
    return int(chunks[chunks["text"].str.contains(word)]["doc_id"].nunique())


def record(results: dict) -> None:
    output = Path(results["arguments"]["output"])
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n")
    log(f"wrote {output}")


async def watched(index: Path, name: str, run) -> dict:  # noqa: ANN001 - a coroutine function
    log_path = WORK / f"{name}-server.log"
    with log_path.open("w") as log_file:
        async with server_client(index, log_file) as client:
            server = Server(client, log_path)
            started = time.perf_counter()
            await server.wait_watching()
            log(f"{name}: watching after {time.perf_counter() - started:.1f} s")
            return await run(server)


async def main_async(args: argparse.Namespace) -> None:
    arguments = {**vars(args), "output": str(args.output), "index": str(args.index) if args.index else None}
    results: dict = {"cpu_cores": os.cpu_count(), "arguments": arguments}
    if args.synthetic_chunks or args.index:
        sources, index = beside(args.index) if args.index else synthetic(args.synthetic_chunks)

        async def notes(server: Server) -> None:
            results["edits"] = await edits(server, sources, args.edits)
            log(f"edits: {results['edits']}")
            record(results)

        await watched(index, args.index.name if args.index else f"synthetic-{args.synthetic_chunks}", notes)
        return
    sources, index = prepared("musique", write_corpus)
    results["no_change_sync"] = no_change_sync(index)
    log(f"no-change sync: {results['no_change_sync']}")
    record(results)

    async def musique(server: Server) -> None:
        results["edits"] = await edits(server, sources, args.edits)
        log(f"edits: {results['edits']}")
        record(results)
        results["idle"] = await idle(server, args.idle_seconds)
        log(f"idle: {results['idle']}")
        record(results)
        if args.burst:
            results["burst"] = await burst(server, sources, args.burst, index)
            log(f"burst: {results['burst']}")
            record(results)

    await watched(index, "musique", musique)
    if args.tree_files:
        tree_sources, tree_index = prepared(
            f"tree-{args.tree_files}", lambda folder: write_tree(folder, args.tree_files)
        )

        async def tree(server: Server) -> None:
            results[f"idle_{args.tree_files}_files"] = await idle(server, args.idle_seconds)
            log(f"idle on {args.tree_files} files: {results[f'idle_{args.tree_files}_files']}")
            record(results)

        await watched(tree_index, "tree", tree)
        results[f"no_change_sync_{args.tree_files}_files"] = no_change_sync(tree_index)
        record(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=100, help="one-file edits timed (default: 100)")
    parser.add_argument("--idle-seconds", type=float, default=600, help="the idle period (default: 600)")
    parser.add_argument("--burst", type=int, default=1000, help="files changed at once (0: none; default: 1000)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"where the results go (default: {OUTPUT})")
    parser.add_argument(
        "--tree-files", type=int, default=20000, help="files of the idle tree (0: none; default: 20000)"
    )
    parser.add_argument(
        "--synthetic-chunks",
        type=int,
        default=0,
        help="time the edits alone, of 100 notes beside a synthetic index of N chunks (bench/speed.py's)",
    )
    parser.add_argument(
        "--index", type=Path, help="as --synthetic-chunks, beside this synthetic index (bench/scale.py's)"
    )
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
