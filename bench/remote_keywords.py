"""keyword_search on an index in object storage beside the same index on local disk.

The synthetic index of bench/speed.py (`chunks-10k` by default: 10,000 chunks of ~1,000 tokens,
written once and cached in bench/results/work/) is copied file by file into a local S3 server
(moto, the test extra), so both hold the same bytes. Each is served in this process as the
server serves it (a LiveIndex; the remote one fetches its keyword segments into a fresh user cache
on first use), then the keyword_search tool answers the queries of bench/speed.py (1, 2 and 3
capitalised names), each query on both indexes in turn. Reported per index and per keyword count: the time to open,
the first call, and p50 / p95 of the calls after it; and whether both answered every query alike.

    python bench/remote_keywords.py                 # chunks-10k
    python bench/remote_keywords.py --chunks 100000

Results go to bench/results/remote_keywords.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BENCH_DATA, RESULTS, log, write_json  # noqa: E402
from speed import (  # noqa: E402
    QUERIES,
    WORK,
    _label,
    keyword_queries,
    keyword_tool,
    passages,
    stats,
    synthetic_chunks,
    vector_pool,
    write_index,
)

BUCKET = "arag-bench"


def start_s3() -> object:
    """A moto S3 server on a free loopback port with BUCKET, and the variables that point at it."""
    import boto3
    from moto.server import ThreadedMotoServer

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from mcp_helpers import free_port

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server.start()
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION="us-east-1",
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
        AWS_ALLOW_HTTP="true",
        AWS_EC2_METADATA_DISABLED="true",
        ARAG_MCP_CACHE=tempfile.mkdtemp(prefix="arag-cache-"),
    )
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    return server


def upload(folder: Path, prefix: str) -> int:
    """Every file of `folder` under `prefix` in BUCKET; the bytes uploaded."""
    import boto3

    client, total = boto3.client("s3"), 0
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.name.startswith(".arag-build"):
            client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(folder).as_posix()}")
            total += path.stat().st_size
    return total


def measure(uris: dict[str, str], queries: dict[int, list[list[str]]]) -> dict:
    """Per index: the time to open it, and per keyword count its first call and the calls after
    it, the indexes answering each query in turn (so that a change in load touches both alike);
    and whether they answered alike."""
    from arag_mcp.server.output.chunk_results import without_conversation

    result: dict = {name: {} for name in uris} | {"same_answers": True}
    with contextlib.ExitStack() as stack:
        calls = {}
        for name, uri in uris.items():
            started = time.perf_counter()
            calls[name] = stack.enter_context(keyword_tool(uri))
            result[name]["open_s"] = round(time.perf_counter() - started, 2)
        for words, asked in queries.items():
            times: dict[str, list[float]] = {name: [] for name in uris}
            for keywords in asked:
                texts = []
                for name, call in calls.items():
                    began = time.perf_counter()
                    answer = call(keywords)
                    conversation = (answer.structured_content or {}).get("conversation")
                    texts.append(without_conversation(answer.content[0].text, conversation))
                    times[name].append(time.perf_counter() - began)
                if len(set(texts)) > 1:
                    result["same_answers"] = False
                    result.setdefault("first_difference", texts)
            for name, taken in times.items():
                result[name][f"{words}_keywords"] = {"first_ms": round(1000 * taken[0], 1)} | {
                    key: round(value, 2) if isinstance(value, float) else value
                    for key, value in stats(taken[1:]).items()
                }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=10_000, help="size of bench/speed.py's synthetic index")
    parser.add_argument("--output", type=Path, default=RESULTS / "remote_keywords.json")
    args = parser.parse_args()
    from arag_mcp.indexer import Embedder

    records = passages(BENCH_DATA)
    chunks = synthetic_chunks(records, args.chunks)
    local = WORK / f"chunks-{_label(args.chunks)}"
    write_index(local, chunks, 10, vector_pool(Embedder().load(), records))
    queries = {words: keyword_queries(chunks, words, QUERIES) for words in (1, 2, 3)}
    server = start_s3()
    uploaded = upload(local, "idx")
    log(f"uploaded {uploaded / 1e6:.0f} MB of {local.name}")
    results: dict = {"index": local.name, "uploaded_mb": round(uploaded / 1e6, 1), "cpu_cores": os.cpu_count()}
    results |= measure({"local": str(local), "remote": f"s3://{BUCKET}/idx"}, queries)
    results["remote_over_local_p50"] = {
        f"{words}_keywords": round(
            results["remote"][f"{words}_keywords"]["p50_ms"] / results["local"][f"{words}_keywords"]["p50_ms"], 2
        )
        for words in queries
    }
    write_json(args.output, results)
    print(json.dumps(results, indent=2))
    server.stop()


if __name__ == "__main__":
    main()
