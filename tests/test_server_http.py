"""The server's streamable-HTTP app in process: the bearer token, DNS-rebinding protection, non-loopback binds."""

from __future__ import annotations

from pathlib import Path

import pytest
from arag_mcp.server.search.live_index import LiveIndex

from .conftest import live_index, run_cli
from .mcp_helpers import app_for, asgi_client, asgi_mcp_client

pytestmark = pytest.mark.anyio
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


async def test_bearer_token_is_required_when_set(hashed_sample_index: Path):
    with live_index(hashed_sample_index) as live:
        app = app_for(live, "streamable-http", "127.0.0.1", token="sesame")
        async with asgi_client(app, "http://127.0.0.1:8000") as http:
            assert (await http.get("/health")).status_code == 200
            denied = await http.post("/mcp", json=PING)
            assert denied.status_code == 401
            http.headers["Authorization"] = "Bearer sesame"
            async with asgi_mcp_client(http) as client:
                result = await client.call_tool("keyword_search", {"keywords": ["radium"]})
                assert not result.is_error


async def test_dns_rebinding_protection_on_loopback(hashed_sample_index: Path):
    async with asgi_client(
        app_for(LiveIndex(str(hashed_sample_index)), "streamable-http", "127.0.0.1"), "http://127.0.0.1:8000"
    ) as http:
        response = await http.post(
            "/mcp", json=PING, headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"}
        )
        assert response.status_code == 421


def test_non_loopback_bind_needs_a_token(hashed_sample_index: Path):
    result = run_cli("arag_mcp.server", "--index", str(hashed_sample_index), "--transport", "sse", "--host", "0.0.0.0")
    assert result.returncode == 2 and "--auth-token" in result.stderr and "Traceback" not in result.stderr
