"""A store that stops answering: how long a call on it takes to answer, and whether calls that need no
store answer while many are stuck on it.

    python bench/store_stall.py                      # --cap 120 --in-flight 60
    python bench/store_stall.py --cap 700            # wait out the old behaviour in full

The bundled sample is built into a local S3 server (moto) behind a TCP proxy (tests/stalling_proxy.py)
and served by a real `arag-mcp --transport streamable-http` process (the arag_mcp on PYTHONPATH, so
another checkout's server can be measured), called through the SDK's client; the proxy then holds
every connection without answering. Measured: one keyword_search (seconds until it answers,
or "no answer" past --cap); the store answers again until keyword_search does, then stalls anew;
--in-flight keyword_search calls at once, and meanwhile the arag://index resource and tools/list
(answered from memory) and chunk_read, each with the seconds it took or "no answer" within
--probe-cap; then how long after the store answers again keyword_search does. Needs moto[server] (the test extra). Results go to
bench/results/store_stall.json (--output).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import arag_mcp.indexer
import httpx2
from common import RESULTS, log
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.mcp_helpers import free_port, http_server  # noqa: E402
from tests.stalling_proxy import StallingProxy  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sample"
BUCKET = "arag-bench"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cap", type=float, default=120.0, help="seconds to wait for the stalled call")
    parser.add_argument("--in-flight", type=int, default=60, help="keyword_search calls stuck at once")
    parser.add_argument("--probe-cap", type=float, default=20.0, help="seconds to wait for each memory call")
    parser.add_argument("--output", type=Path, default=RESULTS / "store_stall.json")
    args = parser.parse_args()

    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    moto.start()
    proxy = StallingProxy(port)
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION="us-east-1",
        AWS_ENDPOINT_URL=proxy.endpoint,
        AWS_ALLOW_HTTP="true",
        AWS_EC2_METADATA_DISABLED="true",
        ARAG_MCP_CACHE=os.environ.get("ARAG_MCP_CACHE", tempfile.mkdtemp()),
    )
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    from arag_mcp.indexer import BuildOptions, Index

    uri = f"s3://{BUCKET}/idx"
    Index(uri).add([SAMPLE], BuildOptions(progress=False))
    results: dict = {"in_flight": args.in_flight, "server": str(Path(arag_mcp.indexer.__file__).parents[1])}
    try:
        with http_server(uri, "streamable-http") as base:
            anyio.run(measure, base, proxy, args, results)
    except (AssertionError, subprocess.TimeoutExpired) as exc:  # a server stuck on the store may not stop
        results["server_stop"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))
    log(json.dumps(results, indent=2))
    proxy.close()
    os._exit(0)  # the proxy's threads may still hold connections


async def timed_call(call, cap: float) -> dict:  # noqa: ANN001 - an awaitable
    started = time.monotonic()
    with anyio.move_on_after(cap) as scope:
        try:
            result = await call
        except Exception as exc:  # noqa: BLE001 - the client gave up (its HTTP timeout)
            return {
                "seconds": None,
                "answer": f"no answer: {type(exc).__name__} after {time.monotonic() - started:.0f} s",
            }
    took = round(time.monotonic() - started, 2)
    if scope.cancelled_caught:
        return {"seconds": None, "answer": f"no answer within {cap:g} s"}
    text = ""
    if getattr(result, "content", None):
        text = getattr(result.content[0], "text", "") or ""
    elif getattr(result, "contents", None):
        text = result.contents[0].text
    elif getattr(result, "tools", None):
        text = f"{len(result.tools)} tools"
    return {"seconds": took, "error": bool(getattr(result, "is_error", False)), "answer": text[:300]}


async def measure(base: str, proxy: StallingProxy, args: argparse.Namespace, results: dict) -> None:
    """Fills `results` as it goes, so that a part cut short leaves the parts before it."""
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(args.cap + 5))
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
        keywords = {"keywords": ["pitchblende"], "top_k": 3}
        first = await client.call_tool("keyword_search", keywords)
        assert not first.is_error, first.content[0].text
        chunk_id = first.structured_content["results"][0]["chunk_id"]
        semantic = await client.call_tool("semantic_search", {"query": "Which element glows faintly blue?"})
        assert not semantic.is_error, semantic.content[0].text  # the model is loaded before the store stalls
        proxy.stall()
        log("store stalled; one keyword_search")
        results["keyword_search"] = await timed_call(client.call_tool("keyword_search", keywords), args.cap)
        log(json.dumps(results["keyword_search"]))
        proxy.recover()
        results["serving_again_after_first_seconds"] = await serving_again(client, keywords, args.cap)
        proxy.stall()
        stuck: list[dict] = []

        async def one_stuck() -> None:
            stuck.append(await timed_call(client.call_tool("keyword_search", keywords), args.cap))

        async with anyio.create_task_group() as calls:
            for _ in range(args.in_flight):
                calls.start_soon(one_stuck)
            await anyio.sleep(1.0)
            log(f"{args.in_flight} keyword_search in flight; calls beside them")
            results["beside_stuck_calls"] = {
                "arag://index": await timed_call(client.read_resource("arag://index"), args.probe_cap),
                "tools/list": await timed_call(client.list_tools(), args.probe_cap),
                "chunk_read": await timed_call(
                    client.call_tool("chunk_read", {"chunk_ids": [chunk_id]}), args.probe_cap
                ),
            }
            log(json.dumps(results["beside_stuck_calls"]))
            if any(probe["seconds"] is None for probe in results["beside_stuck_calls"].values()):
                calls.cancel_scope.cancel()
        answered = [call["seconds"] for call in stuck if call["seconds"] is not None]
        results["stuck_calls"] = {
            "answered": len(answered),
            "max_seconds": max(answered, default=None),
            "answers": sorted({call["answer"][:120] for call in stuck}),
        }
        proxy.recover()
        results["serving_again_after_seconds"] = await serving_again(client, keywords, args.cap)


async def serving_again(client, keywords: dict, cap: float) -> float | None:  # noqa: ANN001 - Client
    """Seconds until keyword_search answers again, or None past `cap`."""
    started = time.monotonic()
    while time.monotonic() - started < cap:
        with anyio.move_on_after(cap):
            try:
                again = await client.call_tool("keyword_search", keywords)
            except Exception:  # noqa: BLE001 - the client gave up on this one; ask again
                continue
            if not again.is_error:
                return round(time.monotonic() - started, 2)
        await anyio.sleep(0.5)
    return None


if __name__ == "__main__":
    main()
