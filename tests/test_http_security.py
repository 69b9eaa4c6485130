"""HTTP transports: DNS-rebinding checks on every loopback address, and the bearer token scheme."""

from __future__ import annotations

from pathlib import Path

import pytest
from arag_mcp.server.search.live_index import LiveIndex

from .mcp_helpers import app_for, asgi_client

pytestmark = pytest.mark.anyio
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ENDPOINTS = {"streamable-http": "/mcp", "sse": "/messages/?session_id=0123456789abcdef0123456789abcdef"}
LOOPBACK_SPELLINGS = ["127.0.0.2", "127.255.255.254", "0:0:0:0:0:0:0:1", "::1", "127.0.0.1", "localhost"]


def host_header(host: str) -> str:
    return f"[{host}]:8000" if ":" in host else f"{host}:8000"


@pytest.mark.parametrize("transport", sorted(ENDPOINTS))
@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
async def test_every_loopback_bind_refuses_a_foreign_host_or_origin(
    hashed_sample_index: Path, transport: str, host: str
):
    app = app_for(LiveIndex(str(hashed_sample_index)), transport, host)
    async with asgi_client(app) as client:
        endpoint = ENDPOINTS[transport]
        foreign_host = await client.post(endpoint, json=PING, headers={**ACCEPT, "Host": "evil.example"})
        assert foreign_host.status_code == 421, (host, transport)
        foreign_origin = await client.post(
            endpoint, json=PING, headers={**ACCEPT, "Host": host_header(host), "Origin": "http://evil.example"}
        )
        assert foreign_origin.status_code == 403, (host, transport)
        own_origin = await client.post(
            endpoint, json=PING, headers={**ACCEPT, "Host": host_header(host), "Origin": f"http://{host_header(host)}"}
        )
        assert own_origin.status_code not in (403, 421), (host, transport, own_origin.text)


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
async def test_bearer_scheme_is_case_insensitive(hashed_sample_index: Path, scheme: str):
    app = app_for(LiveIndex(str(hashed_sample_index)), "streamable-http", "127.0.0.1", token="sesame")
    async with asgi_client(app, "http://127.0.0.1:8000") as client:
        accepted = await client.get("/mcp", headers={"Authorization": f"{scheme} sesame"})
        assert accepted.status_code != 401
        for wrong in (f"{scheme} sesame2", f"{scheme} ", "Basic sesame", "sesame", f"{scheme}sesame"):
            assert (await client.get("/mcp", headers={"Authorization": wrong})).status_code == 401, wrong
        assert (await client.get("/mcp")).status_code == 401
