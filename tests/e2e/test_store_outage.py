"""The real server process over streamable HTTP, its index on a local S3 server (moto) that stalls, then
vanishes, then comes back: what needs the store (the documents list) answered as one line within
--store-timeout, /health following the store, and what the cached keyword segments hold served
throughout, while many calls are stuck on the store."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import urlparse

import anyio
import httpx2
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.indexes import Index

from ..conftest import BUCKET, SAMPLE
from ..mcp_helpers import http_client, http_server, read_documents
from ..stalling_proxy import StallingProxy

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
STORE_TIMEOUT = 4.0
SLACK = 3.0
RADIUM = f"{doc_key('radium')}-0"
IN_FLIGHT = 60
RECOVERY_SECONDS = 60
"""How long the documents list may take to answer again once the store is back: on a loaded machine
it once failed for 18 s after /health said 200 (the LanceDB side reconnecting; not yet explained)."""


@pytest.fixture(scope="module")
def proxy(s3_endpoint: str) -> Iterator[StallingProxy]:
    proxy = StallingProxy(urlparse(s3_endpoint).port)
    yield proxy
    proxy.close()


@pytest.fixture(scope="module")
def index_uri(proxy: StallingProxy) -> str:
    uri = f"s3://{BUCKET}/outage"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        Index(uri).add([SAMPLE], BuildOptions(progress=False))
    return uri


def health(base: str) -> tuple[int, dict]:
    response = httpx2.get(f"{base}/health", timeout=5)
    return response.status_code, response.json()


def health_until(base: str, status: int, within: float) -> dict:
    deadline = time.monotonic() + within
    while True:
        code, body = health(base)
        if code == status or time.monotonic() > deadline:
            assert code == status, body
            return body
        time.sleep(0.3)


async def test_the_server_rides_out_a_store_outage(proxy: StallingProxy, index_uri: str):
    env = {"AWS_ENDPOINT_URL": proxy.endpoint}
    with http_server(index_uri, "streamable-http", "--store-timeout", str(STORE_TIMEOUT), env=env) as base:
        async with http_client(base, "streamable-http", "auto") as client:

            async def keyword_search() -> tuple[float, object]:
                started = time.monotonic()
                result = await client.call_tool("keyword_search", {"keywords": ["pitchblende"], "top_k": 3})
                return time.monotonic() - started, result

            def found_radium(result: object) -> bool:
                hits = [] if result.is_error else result.structured_content["results"]
                return [hit["chunk_id"] for hit in hits] == [RADIUM]

            _, found = await keyword_search()
            assert found_radium(found), found.content[0].text
            assert '"documents": 6' in (await read_documents(client))[1]

            proxy.stall()
            took, listed = await read_documents(client)
            assert took < STORE_TIMEOUT + SLACK and "does not answer" in listed, (took, listed)
            assert "is damaged" not in listed and "\n" not in listed, listed
            assert health_until(base, 503, STORE_TIMEOUT + SLACK)["status"] == "store unreachable"
            took, found = await keyword_search()
            assert took < STORE_TIMEOUT + SLACK and found_radium(found), (took, found.content[0].text)

            stuck: list[tuple[float, str]] = []

            async def one_stuck() -> None:
                stuck.append(await read_documents(client))

            await anyio.sleep(2.5)  # past the probe interval: calls reach the store again and wait on it
            async with anyio.create_task_group() as calls:
                for _ in range(IN_FLIGHT):
                    calls.start_soon(one_stuck)
                await anyio.sleep(0.5)
                started = time.monotonic()
                manifest = await client.read_resource("arag://index")
                assert time.monotonic() - started < 2.0 and index_uri in manifest.contents[0].text
                took, found = await keyword_search()
                assert took < 2.0 and found_radium(found), (took, found.content[0].text)
            assert len(stuck) == IN_FLIGHT and max(took for took, _ in stuck) < STORE_TIMEOUT + SLACK
            assert not any('"documents"' in text for _, text in stuck)

            proxy.vanish()
            took, listed = await read_documents(client)
            assert "does not answer" in listed and took < STORE_TIMEOUT + SLACK, (took, listed)

            proxy.recover()
            health_until(base, 200, 2 * STORE_TIMEOUT + 10)
            deadline = time.monotonic() + RECOVERY_SECONDS
            while '"documents": 6' not in (listed := (await read_documents(client))[1]) and time.monotonic() < deadline:
                await anyio.sleep(0.5)
            assert '"documents": 6' in listed, listed
            assert found_radium((await keyword_search())[1])
