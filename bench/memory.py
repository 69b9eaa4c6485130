"""Server memory: the RSS of a real `arag-mcp` over repeated live reloads and many conversations.

    python bench/memory.py                                   # musique, 30 reloads, 300 conversations
    python bench/memory.py --reloads 60 --conversations 0

- conversations: each of N new conversations opens a long document once (a window of 1,800
  lines), before any reload. Reported: the RSS growth per conversation.
- reloads: the served index switches between two committed builds of the same size (its manifest
  is swapped between them, as a completed build swaps it); after each switch a semantic_search,
  a keyword_search and an open run against the new build, which is confirmed through the
  `arag://index` resource. Reported: RSS after a few warm-up reloads, after the measured ones, and
  the least-squares growth per reload.

The index (the corpus plus one long generated document, built twice) is cached in
bench/results/work/memory/. Figures are printed and written to bench/results/memory.json.
Linux only: RSS is read from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
from common import BENCH_DATA, RESULTS, log
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

WORK = RESULTS / "work" / "memory"
LONG_ID = "memory-long-document"
LONG_LINES = 3000
RELOAD_WAIT_SECONDS = 2.2
"""The server looks for a new build every 2 s."""
WARM_UP_RELOADS = 4


def long_document(extra: str) -> dict:
    """Short lines, one paragraph: an open shows 1,800 of them, and few sentences are embedded."""
    lines = [f"zyxwvut entry {n}" for n in range(LONG_LINES)]
    return {"id": LONG_ID, "title": "Zyxwvut register", "text": "\n".join(lines) + extra}


def prepare(corpus: Path) -> tuple[Path, list[bytes]]:
    """The index, and the manifests of its two builds (the second changes one document's text)."""
    folder = WORK / corpus.parent.name
    index, manifests = folder / "idx", [folder / "manifest-a.json", folder / "manifest-b.json"]
    if all(path.is_file() for path in manifests):
        return index, [path.read_bytes() for path in manifests]
    (folder / "corpus").mkdir(parents=True, exist_ok=True)
    source = folder / "corpus" / "corpus.jsonl"
    records = corpus.read_text(encoding="utf-8")
    for manifest, extra in zip(manifests, ("", "\nzyxwvut entry more")):
        source.write_text(records + json.dumps(long_document(extra)) + "\n", encoding="utf-8")
        log(f"building {index} ({manifest.name})")
        subprocess.run(
            [sys.executable, "-m", "arag_mcp.indexer", "build", str(source.parent), "--index", str(index)], check=True
        )
        shutil.copyfile(index / "manifest.json", manifest)
    return index, [path.read_bytes() for path in manifests]


def serve(index: Path, manifest: bytes) -> None:
    """Commit `manifest` as a build does: written beside, then renamed over the current one."""
    staged = index / "manifest.json.next"
    staged.write_bytes(manifest)
    os.replace(staged, index / "manifest.json")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def server_pid() -> int:
    """The server process this one started (its only child)."""
    children = [
        int(pid) for task in Path("/proc/self/task").iterdir() for pid in (task / "children").read_text().split()
    ]
    if len(children) != 1:
        raise RuntimeError(f"expected one child process, found {children}")
    return children[0]


def growth_per_step(values: list[float]) -> float:
    """Least-squares slope of `values` against their index."""
    count = len(values)
    mean_x, mean_y = (count - 1) / 2, sum(values) / count
    spread = sum((x - mean_x) ** 2 for x in range(count))
    return sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values)) / spread if spread else 0.0


async def measure(index: Path, manifests: list[bytes], reloads: int, conversations: int) -> dict:
    serve(index, manifests[0])
    arguments = ["-m", "arag_mcp.server", "--index", str(index), "--profile", "arag-plus"]  # arag-plus has open
    params = StdioServerParameters(command=sys.executable, args=arguments)
    figures: dict = {"index": str(index)}
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet)) as client:
            pid = server_pid()
            found = await client.call_tool("keyword_search", {"keywords": ["zyxwvut"], "top_k": 1})
            ref = found.structured_content["results"][0]["chunk_id"]

            async def use() -> None:
                for name, arguments in (
                    ("semantic_search", {"query": "who founded the city", "top_k": 5}),
                    ("keyword_search", {"keywords": ["capital"], "top_k": 5}),
                    ("open", {"ref": ref}),
                ):
                    result = await client.call_tool(name, arguments)
                    if result.is_error:
                        raise RuntimeError(f"{name} failed: {result.content[0].text}")

            async def reload(number: int) -> None:
                manifest = manifests[(number + 1) % 2]
                serve(index, manifest)
                await anyio.sleep(RELOAD_WAIT_SECONDS)
                await use()
                served = json.loads((await client.read_resource("arag://index")).contents[0].text)["built_at"]
                if served != json.loads(manifest)["built_at"]:
                    raise RuntimeError("the server did not pick up the new build; is the machine very busy?")

            await use()  # the model loaded and the long document read before anything is measured
            if conversations:
                before = rss_mb(pid)
                for _ in range(conversations):
                    result = await client.call_tool("open", {"ref": ref})
                    if result.is_error:
                        raise RuntimeError(f"open failed: {result.content[0].text}")
                after = rss_mb(pid)
                figures["conversations"] = {
                    "count": conversations,
                    "lines_opened_each": result.structured_content["last_line"]
                    - result.structured_content["first_line"]
                    + 1,
                    "rss_mb_before": round(before, 1),
                    "rss_mb_after": round(after, 1),
                    "kb_per_conversation": round((after - before) * 1024 / conversations, 1),
                }
            for number in range(WARM_UP_RELOADS):
                await reload(number)
            series = [rss_mb(pid)]
            for number in range(WARM_UP_RELOADS, WARM_UP_RELOADS + reloads):
                await reload(number)
                series.append(rss_mb(pid))
                log(f"reload {number + 1 - WARM_UP_RELOADS}/{reloads}: {series[-1]:.1f} MB")
            figures["reloads"] = {
                "count": reloads,
                "rss_mb_before": round(series[0], 1),
                "rss_mb_after": round(series[-1], 1),
                "rss_mb_per_reload": round(growth_per_step(series), 2),
                "rss_mb_series": [round(value, 1) for value in series],
            }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=BENCH_DATA / "musique" / "corpus.jsonl", help="a JSONL corpus")
    parser.add_argument("--reloads", type=int, default=30, help="measured live reloads (after a warm-up)")
    parser.add_argument("--conversations", type=int, default=300, help="new conversations that each open once")
    parser.add_argument("--out", type=Path, default=RESULTS / "memory.json")
    args = parser.parse_args()
    index, manifests = prepare(args.corpus)
    started = time.perf_counter()
    figures = anyio.run(measure, index, manifests, args.reloads, args.conversations)
    figures["seconds"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    print(json.dumps({key: value for key, value in figures.items()}, indent=2))


if __name__ == "__main__":
    main()
