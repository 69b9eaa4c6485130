"""An index on an object store that stalls or vanishes mid-service, then comes back: the server's
tools over a local S3 server (moto) behind a proxy that can hold or refuse its connections. What the
keyword segments hold is answered from the cache; what needs the store (the LanceDB tables, the
documents list) ends within the deadline as one line."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlparse

import anyio
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.errors import StoreUnanswered
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.schema import CHUNKS
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.index.store import DEFAULT_STORE_SECONDS, set_store_deadline
from arag_mcp.indexer.index.store_reads import STORE_WAITERS
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from mcp import Client

from .conftest import BUCKET, HASHED_MODEL, SAMPLE, live_index, run_cli
from .mcp_helpers import app_for, asgi_client, read_documents
from .stalling_proxy import StallingProxy

boto3 = pytest.importorskip("boto3")
pytestmark = pytest.mark.anyio

DEADLINE = 3.0
"""The store deadline these tests run under (--store-timeout)."""
SLACK = 2.0
"""What a call may take beyond the deadline: the server's own work on a shared CPU."""
RADIUM = f"{doc_key('radium')}-0"
IN_FLIGHT = 60


@dataclass
class Store:
    proxy: StallingProxy
    source: str
    """The index built once for the module; each test serves a copy of its own."""


@pytest.fixture(scope="module")
def store(s3_endpoint: str) -> Iterator[Store]:
    proxy = StallingProxy(urlparse(s3_endpoint).port)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        set_store_deadline(DEADLINE)
        source = f"s3://{BUCKET}/deadlines"
        Index(source).add([SAMPLE], BuildOptions(model=HASHED_MODEL, progress=False))
        try:
            yield Store(proxy, source)
        finally:
            set_store_deadline(DEFAULT_STORE_SECONDS)
            proxy.close()


@pytest.fixture
def index_uri(store: Store, request: pytest.FixtureRequest) -> Iterator[str]:
    """A copy of the module's index under a prefix of this test's own: each index URI has its own
    record of whether its store answers."""
    s3 = boto3.client("s3", endpoint_url=store.proxy.endpoint)
    source_prefix = store.source.removeprefix(f"s3://{BUCKET}/")
    prefix = f"{source_prefix}-{request.node.name}"
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{source_prefix}/"):
        for item in page["Contents"]:
            key = prefix + item["Key"].removeprefix(source_prefix)
            s3.copy_object(Bucket=BUCKET, Key=key, CopySource={"Bucket": BUCKET, "Key": item["Key"]})
    yield f"s3://{BUCKET}/{prefix}"
    store.proxy.recover()


async def timed(call) -> tuple[float, object]:  # noqa: ANN001 - an awaitable
    started = time.monotonic()
    result = await call
    return time.monotonic() - started, result


async def keyword_search(client: Client) -> object:
    return await client.call_tool("keyword_search", {"keywords": ["pitchblende"], "top_k": 3})


async def serves(client: Client, within: float) -> bool:
    """Whether keyword_search and semantic_search (its model loaded) find their chunk again within
    `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = await keyword_search(client)
        semantic = await client.call_tool("semantic_search", {"query": "Which element glows faintly blue?"})
        if not found.is_error and not semantic.is_error:
            return [hit["chunk_id"] for hit in found.structured_content["results"]] == [RADIUM] and (
                semantic.structured_content["results"][0]["chunk_id"] == RADIUM
            )
        await anyio.sleep(0.5)
    return False


@pytest.mark.parametrize("failure", ["stall", "vanish"])
async def test_keyword_search_and_chunk_read_answer_from_the_cached_segments_while_the_store_is_silent(
    store: Store, index_uri: str, failure: str
):
    """A remote index's keyword segments are fetched once into the cache and mapped: a store that
    stops answering stops none of what they hold."""
    with live_index(index_uri) as live:
        async with Client(create_server(live)) as client:
            assert await serves(client, 30)
            getattr(store.proxy, failure)()
            took, result = await timed(keyword_search(client))
            assert took < 1.0 and not result.is_error, (took, result.content[0].text)
            assert [hit["chunk_id"] for hit in result.structured_content["results"]] == [RADIUM]
            took, result = await timed(client.call_tool("chunk_read", {"chunk_ids": [RADIUM]}))
            assert took < 1.0 and not result.is_error, (took, result.content[0].text)
            store.proxy.recover()
            assert await serves(client, 2 * DEADLINE + 5)


@pytest.mark.parametrize("failure", ["stall", "vanish"])
def test_opening_the_tables_on_a_silent_store_is_one_line_within_the_deadline(
    store: Store, index_uri: str, failure: str
):
    """Semantic search opens the LanceDB tables when first used, after the segments were mapped:
    on a store that stopped answering meanwhile, that open ends within the deadline, and opens once
    the store is back."""
    snapshot = open_index(index_uri)
    getattr(store.proxy, failure)()
    for opening in (lambda: snapshot.sentences, lambda: snapshot.tables[CHUNKS]):
        started = time.monotonic()
        with pytest.raises(StoreUnanswered, match="does not answer") as failed:
            opening()
        assert time.monotonic() - started < DEADLINE + SLACK
        assert "\n" not in str(failed.value) and "is damaged" not in str(failed.value)
    store.proxy.recover()
    deadline = time.monotonic() + 2 * DEADLINE + 5
    while True:
        try:
            assert snapshot.sentences.count() == snapshot.manifest.counts.sentences
            break
        except StoreUnanswered:
            assert time.monotonic() < deadline, "the tables did not open once the store answered again"
            time.sleep(0.5)


async def test_calls_from_memory_answer_while_calls_are_stuck_on_the_store(store: Store, index_uri: str):
    with live_index(index_uri) as live:
        async with Client(create_server(live)) as client:
            assert await serves(client, 30)
            _, listed = await read_documents(client)
            assert '"documents": 6' in listed, listed
            store.proxy.stall()
            results: list[tuple[float, str]] = []

            async def stuck() -> None:
                results.append(await read_documents(client))

            async with anyio.create_task_group() as calls:
                for _ in range(IN_FLIGHT):
                    calls.start_soon(stuck)
                await anyio.sleep(0.5)  # all in flight, none past the deadline
                took, manifest = await timed(client.read_resource("arag://index"))
                assert took < 1.0 and index_uri in manifest.contents[0].text, took
                took, listed_tools = await timed(client.list_tools())
                assert took < 1.0 and listed_tools.tools, took
                for tool, arguments in (
                    ("keyword_search", {"keywords": ["pitchblende"], "top_k": 3}),
                    ("semantic_search", {"query": "Which element glows faintly blue?"}),
                    ("chunk_read", {"chunk_ids": [RADIUM]}),
                ):
                    took, result = await timed(client.call_tool(tool, arguments))
                    assert took < 1.0 and not result.is_error, (tool, took, result.content[0].text)
            assert len(results) == IN_FLIGHT
            assert max(took for took, _ in results) < DEADLINE + SLACK
            texts = [text for _, text in results]
            assert all("\n" not in text and "is damaged" not in text for text in texts), set(texts)
            waited = [text for text in texts if "does not answer" in text]
            refused = [text for text in texts if f"{STORE_WAITERS} reads are waiting" in text]
            assert len(waited) + len(refused) == IN_FLIGHT and len(waited) >= 1, set(texts)
            store.proxy.recover()
            assert await serves(client, 2 * DEADLINE + 5)


async def test_health_reports_a_store_that_does_not_answer(store: Store, index_uri: str):
    with live_index(index_uri) as live:
        app = app_for(live, "streamable-http", "127.0.0.1")
        async with asgi_client(app, "http://127.0.0.1:8000") as http:

            async def health_until(status: int, within: float) -> dict:
                deadline = time.monotonic() + within
                while True:
                    response = await http.get("/health")
                    if response.status_code == status or time.monotonic() > deadline:
                        assert response.status_code == status, response.text
                        return response.json()
                    await anyio.sleep(0.3)

            answering = await health_until(200, 10)
            assert answering["store"] == f"the object store at {store.proxy.endpoint} ({index_uri}) answers"
            store.proxy.vanish()
            silent = await health_until(503, DEADLINE + SLACK)
            assert silent["status"] == "store unreachable"
            assert silent["store"].startswith(
                f"the object store at {store.proxy.endpoint} ({index_uri}) does not answer"
            )
            store.proxy.recover()
            assert (await health_until(200, 2 * DEADLINE + 5))["status"] == "ok"


@pytest.mark.parametrize("failure", ["stall", "vanish"])
def test_commands_name_a_store_that_does_not_answer(store: Store, index_uri: str, failure: str):
    getattr(store.proxy, failure)()
    deadline = ["--store-timeout", str(DEADLINE)]
    for module, args in (
        ("arag_mcp.indexer", ["info", "--index", index_uri]),
        ("arag_mcp.indexer", ["build", str(SAMPLE), "--index", index_uri, "--quiet"]),
        ("arag_mcp.server", ["--index", index_uri]),
    ):
        result = run_cli(module, *args, *deadline)
        assert result.returncode == 2, (args, result.stderr)
        line = result.stderr.strip()
        assert "\n" not in line and "Traceback" not in line, line
        assert f"the object store at {store.proxy.endpoint} ({index_uri}) does not answer" in line, line
        assert "is damaged" not in line, line


def test_a_local_index_has_no_store_to_report(hashed_sample_index):  # noqa: ANN001 - Path
    live = LiveIndex(str(hashed_sample_index))
    assert live.store_state() is None
    assert create_server(live).health() == (200, {"status": "ok"})
