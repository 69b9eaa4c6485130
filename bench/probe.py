"""Robustness probe: hostile and concurrent use of the real server and indexer, in one bounded run.

    python bench/probe.py                       # all parts, default sizes
    python bench/probe.py --parts fuzz,raw      # some parts
    python bench/probe.py --fuzz 3400 --concurrent 12000 --kills 16 --live-seconds 60

Parts (each counts what a user would call a failure):

- fuzz: random tool calls (wrong types, aliases, unknown tools, huge, unicode and punctuated
  arguments) over stdio, half in each client mode (2026-07-28 "auto" and handshake "legacy").
  Failure: no answer, a traceback or an internal path in an answer, the server process dying.
- raw: malformed JSON-RPC lines written straight to the stdio server; after each, a valid request
  must still be answered.
- concurrent: many clients at once over streamable HTTP and SSE, each searching and reading.
  Failure: any call that raises or returns an error.
- kill: `kill -9` of incremental builds at random table writes (each build holds a document longer
  than a write batch); after each the index must open (`arag-index info`), and the next build must
  complete with every document whole (each of its chunks once, and its documents row). With faketime installed, the builds that
  commit run days in the past, so that clean-up of old table versions meets the committed ones.
- live: keyword_search calls over stdio while builds of the same index land. Failure: any call
  that fails; also says whether the server then serves the newest build.
- stall: hostile calls (a backtracking source pattern against a long file name, a scope of 2,000
  keys, long keyword and pattern lists) over streamable HTTP while a second client searches and
  `/health` is polled. Failure: a hostile call that takes more than STALL_LIMIT seconds to answer,
  or a call or health check of the others that waits longer than that.

Figures are printed and written to bench/results/probe.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from common import RESULTS, log
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "sample"
sys.path.insert(0, str(REPO / "tests"))
from mcp_helpers import http_client, http_server  # noqa: E402 - the tests' own server harness

TOOLS = ("keyword_search", "semantic_search", "chunk_read")
LEAKS = ("Traceback", ".rs:", "site-packages", "lance error")
CRASHES = ("failed on the server", "Error executing tool")
"""How a tool's unforeseen exception reads (server/errors.py, or the SDK's own wording)."""
STRANGE = [
    "",
    " ",
    "a." * 50_000,
    "é" * 3000,
    "\x00\x01",
    "東京",
    "🙂" * 100,
    "' OR 1=1 --",
    "%s%n",
    "../../etc/passwd",
    "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
    "rcvixxccae-" + "9" * 5000,
    "x" * 100_000,
    "Marie Curie",
    "radium",
    "pitchblende",
    "1911",
]
LONG_NAME = "a" * 200 + ".md"
"""A source name long enough for a backtracking pattern to take minutes against it."""
HOSTILE_SCOPES = [
    {"source": "?*" * 20 + "z"},
    {"source": "*a" * 40 + "!"},
    {"source": "**/" * 100 + "x"},
    {f"field{i}": i for i in range(2000)},
    {"source": "[z-a]"},
    {"source": "a/**b"},
    {"source": "\\"},
    {"source": "x" * 100_000},
    {"category": "y" * 100_000},
    "?*" * 20 + "z",
]
STALL_LIMIT = 1.0
"""Seconds a call or health check may wait while hostile calls run."""


def corpus(folder: Path, documents: int, seed: int) -> Path:
    """The sample plus `documents` synthetic records built from its sentences (a build of some seconds)."""
    rng = random.Random(seed)
    words = " ".join(path.read_text(encoding="utf-8") for path in SAMPLE.glob("*.md")).split()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SAMPLE, folder / "sample", dirs_exist_ok=True)
    records = [
        {"id": f"synthetic-{seed}-{i}", "title": f"Note {i}", "text": " ".join(rng.choices(words, k=60)) + "."}
        for i in range(documents)
    ]
    (folder / "notes.jsonl").write_text("\n".join(json.dumps(record) for record in records), encoding="utf-8")
    (folder / LONG_NAME).write_text(" ".join(rng.choices(words, k=40)) + ".", encoding="utf-8")
    long_document = " ".join(f"{word.capitalize()} {rng.choice(words)} {rng.choice(words)}." for word in words[:200])
    (folder / f"long-{seed}.txt").write_text(long_document, encoding="utf-8")
    return folder


def build_command(sources: Path, index: Path) -> list[str]:
    return [sys.executable, "-m", "arag_mcp.indexer", "build", str(sources), "--index", str(index), "--quiet"]


def random_value(rng: random.Random) -> object:
    kind = rng.randrange(8)
    if kind == 0:
        return rng.choice(STRANGE)
    if kind == 1:
        return [rng.choice(STRANGE) for _ in range(rng.randrange(0, 30))]
    if kind == 2:
        return rng.choice([0, -1, 21, 5, 2**70, 3.5, True, None])
    if kind == 3:
        return {"nested": rng.choice(STRANGE)}
    if kind == 4:
        return [rng.choice([1, None, [], {}])]
    return rng.choice(STRANGE)


def random_call(rng: random.Random) -> tuple[str, dict]:
    """Half well-typed calls with strange contents (they reach retrieval), half anything at all."""
    tool = rng.choice([*TOOLS, *TOOLS, "no_such_tool"])
    if rng.random() < 0.5:
        strings = [rng.choice(STRANGE) for _ in range(rng.randrange(1, 4))]
        arguments = {
            "keyword_search": {"keywords": strings, "top_k": rng.randrange(1, 21)},
            "semantic_search": {"query": strings[0], "top_k": rng.randrange(1, 21)},
            "chunk_read": {"chunk_ids": strings},
        }.get(tool, {})
        if tool != "chunk_read" and rng.random() < 0.3:
            arguments["scope"] = rng.choice([*HOSTILE_SCOPES, {"source": rng.choice(STRANGE)}])
        return tool, arguments
    names = ["keywords", "query", "chunk_ids", "top_k", "conversation", "keyword", "question", "ids", "k", "extra"]
    arguments = {name: random_value(rng) for name in rng.sample(names, rng.randrange(0, 4))}
    return tool, arguments


def text_of(result: object) -> str:
    return "\n".join(getattr(block, "text", "") or "" for block in getattr(result, "content", []))


async def fuzz(index: Path, calls: int, seed: int) -> dict:
    """Random calls over stdio in both client modes."""
    figures = {"calls": calls // 2 * 2, "answered": 0, "errors": 0, "leaks": 0, "crashes": 0, "failures": 0}
    rng = random.Random(seed)
    for mode in ("auto", "legacy"):
        try:
            await fuzz_one_server(index, mode, calls // 2, rng, figures)
        except Exception as exc:  # noqa: BLE001 - the server died or hung: the calls left are unanswered
            log(f"fuzz ({mode}): no answer: {exc!r}")
    figures["failures"] = figures["calls"] - figures["answered"] + figures["leaks"] + figures["crashes"]
    return figures


async def fuzz_one_server(index: Path, mode: str, calls: int, rng: random.Random, figures: dict) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "arag_mcp.server", "--index", str(index)])
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), mode=mode) as client:
            for _ in range(calls):
                tool, arguments = random_call(rng)
                try:
                    with anyio.fail_after(120):
                        result = await client.call_tool(tool, arguments)
                except MCPError as exc:  # a protocol error is an answer too
                    message, is_error = str(exc), True
                else:
                    message, is_error = text_of(result), result.is_error
                figures["answered"] += 1
                figures["errors"] += bool(is_error)
                if any(leak in message for leak in LEAKS) or (is_error and "\n" in message.strip()):
                    figures["leaks"] += 1
                    log(f"leak from {tool} {json.dumps(arguments)[:80]}: {message[:200]!r}")
                if any(crash in message for crash in CRASHES):
                    figures["crashes"] += 1
                    log(f"crash in {tool} {json.dumps(arguments)[:80]}: {message[:200]!r}")


RAW_LINES = [
    "",
    "{",
    "null",
    "[]",
    "42",
    '"text"',
    "{}",
    '{"jsonrpc": "2.0"}',
    '{"jsonrpc": "1.0", "id": 1, "method": "ping"}',
    '{"jsonrpc": "2.0", "id": 1}',
    '{"jsonrpc": "2.0", "id": null, "method": "ping"}',
    '{"jsonrpc": "2.0", "id": {}, "method": "ping"}',
    '{"jsonrpc": "2.0", "id": 2, "method": "tools/call"}',
    '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": []}',
    '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": 5}}',
    '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "keyword_search", "arguments": "x"}}',
    '{"jsonrpc": "2.0", "id": 6, "method": "no/such/method"}',
    '{"jsonrpc": "2.0", "method": "notifications/unknown"}',
    "\x00\x01\x02",
    "\udcff",
    "[" * 10_000,
    '{"a": ' * 5_000 + "1" + "}" * 5_000,
    "x" * 1_000_000,
    '{"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "file:///etc/passwd"}}',
    '{"jsonrpc": "2.0", "id": 8, "method": "prompts/get", "params": {"name": "arag", "arguments": {"question": 5}}}',
]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}


def raw_lines(index: Path) -> dict:
    """Malformed lines on the server's stdin; each is followed by a ping that must be answered."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arag_mcp.server", "--index", str(index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        errors="replace",
    )
    figures = {"lines": 0, "answered_after": 0, "tracebacks_on_stdout": 0}

    def send(message: str) -> None:
        process.stdin.write(message + "\n")
        process.stdin.flush()

    def answer(wanted_id: int) -> bool:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                return False
            figures["tracebacks_on_stdout"] += "Traceback" in line
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(message, dict) and message.get("id") == wanted_id:
                return True
        return False

    send(json.dumps(INITIALIZE))
    answer(0)
    send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    for number, line in enumerate(RAW_LINES, start=1000):
        figures["lines"] += 1
        try:
            send(line.encode("utf-8", "replace").decode("utf-8"))
            send(json.dumps({"jsonrpc": "2.0", "id": number, "method": "ping"}))
            figures["answered_after"] += answer(number)
        except (BrokenPipeError, OSError):
            break
    process.kill()
    process.wait()
    figures["failures"] = figures["lines"] - figures["answered_after"] + figures["tracebacks_on_stdout"]
    return figures


async def one_client(base: str, transport: str, mode: str, calls: int, rng: random.Random, figures: dict) -> None:
    try:
        async with http_client(base, transport, mode) as client:
            conversation = None
            for _ in range(calls):
                tool = rng.choice(["keyword_search", "keyword_search", "chunk_read"])
                if tool == "keyword_search":
                    arguments = {"keywords": [rng.choice(["radium", "Marie Curie", "Paris", "polonium"])]}
                else:
                    arguments = {"chunk_ids": [rng.choice(figures["ids"])]}
                if conversation:
                    arguments["conversation"] = conversation
                figures["calls"] += 1
                result = await client.call_tool(tool, arguments)
                conversation = (result.structured_content or {}).get("conversation") or conversation
                figures["failures"] += bool(result.is_error)
    except Exception as exc:  # noqa: BLE001 - a client that breaks is counted, not fatal to the probe
        figures["broken_clients"] += 1
        log(f"{transport} client failed: {exc!r}")


async def concurrent(index: Path, total: int, clients: int, seed: int) -> dict:
    """`total` calls split over `clients` concurrent clients per transport, half in each mode."""
    from arag_mcp.indexer import open_index

    ids = open_index(str(index)).catalogue.chunk_ids.to_pylist()
    rng = random.Random(seed)
    results = {}
    for transport in ("streamable-http", "sse"):
        figures = {"calls": 0, "failures": 0, "broken_clients": 0, "ids": ids}
        with http_server(index, transport) as base:
            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for number in range(clients):
                    mode = ("auto", "legacy")[number % 2]
                    calls = total // 2 // clients
                    group.start_soon(one_client, base, transport, mode, calls, random.Random(rng.random()), figures)
            figures["seconds"] = round(time.perf_counter() - started, 1)
        del figures["ids"]
        results[transport] = figures
    return results


def table_writes_since(index: Path, moment: float) -> int:
    """Table versions written at or after `moment` (wall clock): how far a running build has got."""
    from arag_mcp.indexer.index.schema import CHUNKS, SENTENCES

    versions = (path for table in (CHUNKS, SENTENCES) for path in index.glob(f"{table}.lance/_versions/*"))
    count = 0
    for path in versions:
        try:
            count += path.stat().st_mtime >= moment
        except FileNotFoundError:  # removed by the build's clean-up meanwhile
            pass
    return count


def incomplete(index: Path) -> dict[str, str]:
    """The documents of the committed build that lack a chunk or their documents row (completeness.py)."""
    import lancedb
    from arag_mcp.indexer.index.completeness import incomplete_documents
    from arag_mcp.indexer.index.schema import CHUNKS, DOCUMENTS, ChunkColumn, DocumentColumn

    manifest = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    db = lancedb.connect(str(index))
    tables = {}
    for name, columns in (
        (CHUNKS, [ChunkColumn.ID, ChunkColumn.DOC_ID, ChunkColumn.PART, ChunkColumn.PARTS]),
        (DOCUMENTS, [DocumentColumn.ID, DocumentColumn.CHUNKS]),
    ):
        table = db.open_table(name)
        table.checkout(manifest["tables"][name])
        tables[name] = table.search().select(columns).limit(None).to_arrow()
    return incomplete_documents(tables[CHUNKS], tables[DOCUMENTS])


def kills(index: Path, sources: Path, count: int, age_days: int, seed: int) -> dict:
    """kill -9 of incremental builds at random moments; the index must open and the next build finish.

    A moment is a random number of table writes into the build (the writes a completed build
    made bound it) plus up to 0.2 s: every stage between table writes is hit, the compaction
    and clean-up just before the manifest commit included. With `age_days`, the builds that commit
    run that many days in the past (faketime), so a killed build's clean-up of old table versions
    meets the versions the committed manifest names.
    """
    rng = random.Random(seed)
    aged = ["faketime", f"-{age_days} days"] if age_days else []
    figures = {
        "kills": 0,
        "opens_after": 0,
        "next_build_completes": 0,
        "documents_whole_after": 0,
        "committed_builds_aged_days": age_days,
    }
    subprocess.run([*aged, *build_command(sources, index)], capture_output=True, check=True)
    writes = 12
    for number in range(count):
        changed = corpus(sources.parent / f"changed-{number}", 40 + number, seed + number)
        command = [*build_command(changed, index), "--write-batch", "32"]
        started = time.time()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        target = rng.randint(1, writes)
        while process.poll() is None and table_writes_since(index, started) < target:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.2))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            figures["kills"] += 1
        process.wait()
        info = subprocess.run(
            [sys.executable, "-m", "arag_mcp.indexer", "info", "--index", str(index)], capture_output=True, text=True
        )
        figures["opens_after"] += info.returncode == 0
        if info.returncode:
            log(f"kill {number} (after {target} table writes): info failed: {info.stderr.strip()[:300]}")
        started = time.time()
        completed = subprocess.run([*aged, *command], capture_output=True, text=True)
        writes = max(1, table_writes_since(index, started))
        figures["next_build_completes"] += completed.returncode == 0
        if completed.returncode:
            log(f"kill {number}: next build failed: {completed.stderr.strip()[-300:]}")
        else:
            partial = incomplete(index)
            figures["documents_whole_after"] += not partial
            if partial:
                log(f"kill {number}: documents written in part: {partial}")
        if info.returncode or completed.returncode:  # start the next kill from a sound index
            subprocess.run([*aged, *command, "--rebuild"], capture_output=True, check=True)
        log(f"kill {number} (after {target} table writes): {figures}")
    figures["builds"] = count
    figures["failures"] = (
        3 * count - figures["opens_after"] - figures["next_build_completes"] - figures["documents_whole_after"]
    )
    return figures


def built_at(index: Path) -> str:
    info = subprocess.run(
        [sys.executable, "-m", "arag_mcp.indexer", "info", "--index", str(index)], capture_output=True, text=True
    )
    return json.loads(info.stdout)["built_at"]


async def live(index: Path, sources: Path, seconds: float, seed: int) -> dict:
    """keyword_search over stdio, without pause, while builds of the same index land."""
    figures = {"calls": 0, "failures": 0, "builds_landed": 0}
    params = StdioServerParameters(command=sys.executable, args=["-m", "arag_mcp.server", "--index", str(index)])
    first = built_at(index)
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet)) as client:
            deadline = time.monotonic() + seconds
            number = 0
            while time.monotonic() < deadline:
                changed = corpus(sources.parent / f"live-{number}", 30, seed + 1000 + number)
                builder = subprocess.Popen(
                    build_command(changed, index), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                while builder.poll() is None:
                    result = await client.call_tool("keyword_search", {"keywords": ["Note", "radium"], "top_k": 3})
                    figures["calls"] += 1
                    figures["failures"] += bool(result.is_error)
                figures["builds_landed"] += builder.returncode == 0
                number += 1
            await anyio.sleep(3)  # the server looks for a new build every 2 s
            resource = await client.read_resource("arag://index")
            figures["server_serves_newest_build"] = json.loads(resource.contents[0].text)["built_at"] == built_at(index)
            figures["server_moved_on"] = json.loads(resource.contents[0].text)["built_at"] != first
    return figures


async def stall(index: Path, rounds: int) -> dict:
    """Each hostile scope, `rounds` times, over streamable HTTP, while a second client searches and
    `/health` is polled: how long the hostile calls take, and the longest any other request waited."""
    import httpx2

    figures = {"hostile_calls": 0, "hostile_errors": 0, "slowest_hostile": 0.0, "other_calls": 0, "slowest_other": 0.0}
    figures["health_checks"] = 0
    with http_server(index, "streamable-http") as base:
        done = anyio.Event()

        async def others() -> None:
            async with http_client(base, "streamable-http", "auto") as client, httpx2.AsyncClient() as http:
                while not done.is_set():
                    started = time.perf_counter()
                    await http.get(f"{base}/health", timeout=60)
                    await client.call_tool("keyword_search", {"keywords": ["radium"], "top_k": 3})
                    figures["health_checks"] += 1
                    figures["other_calls"] += 1
                    figures["slowest_other"] = max(figures["slowest_other"], time.perf_counter() - started)

        async with anyio.create_task_group() as group:
            group.start_soon(others)
            async with http_client(base, "streamable-http", "auto") as client:
                for _ in range(rounds):
                    for scope in HOSTILE_SCOPES:
                        for tool, arguments in (
                            ("keyword_search", {"keywords": ["x" * 200] * 20}),
                            ("semantic_search", {"query": "radium"}),
                        ):
                            started = time.perf_counter()
                            with anyio.fail_after(600):
                                result = await client.call_tool(tool, {**arguments, "scope": scope})
                            elapsed = time.perf_counter() - started
                            figures["hostile_calls"] += 1
                            figures["hostile_errors"] += bool(result.is_error)
                            figures["slowest_hostile"] = max(figures["slowest_hostile"], elapsed)
                            message = text_of(result)
                            if elapsed > STALL_LIMIT or any(crash in message for crash in CRASHES):
                                log(f"stall: {tool} {json.dumps(scope)[:80]}: {elapsed:.2f} s: {message[:200]!r}")
            done.set()
    figures["slowest_hostile"] = round(figures["slowest_hostile"], 3)
    figures["slowest_other"] = round(figures["slowest_other"], 3)
    figures["failures"] = int(figures["slowest_hostile"] > STALL_LIMIT) + int(figures["slowest_other"] > STALL_LIMIT)
    return figures


PARTS = ("fuzz", "raw", "concurrent", "kill", "live", "stall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--fuzz", type=int, default=400, help="fuzzed tool calls (half per client mode)")
    parser.add_argument("--concurrent", type=int, default=2000, help="calls per HTTP transport run, in total")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients per transport")
    parser.add_argument("--kills", type=int, default=4, help="builds killed with SIGKILL")
    parser.add_argument(
        "--kill-age-days",
        type=int,
        default=8 if shutil.which("faketime") else 0,
        help="run committing builds this many days in the past with faketime (default: 8 where installed)",
    )
    parser.add_argument("--live-seconds", type=float, default=30.0, help="how long builds land under queries")
    parser.add_argument("--stall-rounds", type=int, default=3, help="times each hostile scope is sent")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--out", type=Path, default=RESULTS / "probe.json")
    args = parser.parse_args()
    parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s) {', '.join(sorted(unknown))}; choose from {', '.join(PARTS)}")
    figures: dict = {"arguments": {k: str(v) for k, v in vars(args).items()}}
    with tempfile.TemporaryDirectory(prefix="arag-probe-") as work:
        sources = corpus(Path(work) / "sources", 60, args.seed)
        index = Path(work) / "idx"
        log("building the probe's index")
        built = subprocess.run(build_command(sources, index), capture_output=True, text=True)
        if built.returncode:
            sys.exit(f"probe: the first build failed: {built.stderr.strip()[-500:]}")
        started = time.perf_counter()
        if "fuzz" in parts:
            figures["fuzz"] = anyio.run(fuzz, index, args.fuzz, args.seed)
            log(f"fuzz: {figures['fuzz']}")
        if "raw" in parts:
            figures["raw"] = raw_lines(index)
            log(f"raw: {figures['raw']}")
        if "concurrent" in parts:
            figures["concurrent"] = anyio.run(concurrent, index, args.concurrent, args.clients, args.seed)
            log(f"concurrent: {figures['concurrent']}")
        if "live" in parts:
            figures["live"] = anyio.run(live, index, sources, args.live_seconds, args.seed)
            log(f"live: {figures['live']}")
        if "stall" in parts:
            figures["stall"] = anyio.run(stall, index, args.stall_rounds)
            log(f"stall: {figures['stall']}")
        if "kill" in parts:
            figures["kill"] = kills(index, sources, args.kills, args.kill_age_days, args.seed)
            log(f"kill: {figures['kill']}")
        figures["seconds"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
