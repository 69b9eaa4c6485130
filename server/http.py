"""HTTP transports (SSE, streamable HTTP): DNS-rebinding protection, optional bearer token."""

from __future__ import annotations

import hmac
import logging

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

HEALTH_PATH = "/health"


class BearerTokenMiddleware:
    """Reject HTTP requests that lack `Authorization: Bearer <token>` (the health check is open)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != HEALTH_PATH:
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = PlainTextResponse(
                    "missing or wrong bearer token", status_code=401, headers={"WWW-Authenticate": "Bearer"}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def security_settings(allowed_hosts: list[str]) -> TransportSecuritySettings | None:
    """Explicit Host allow-list when given; otherwise the SDK's default (on for loopback binds)."""
    if not allowed_hosts:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts, allowed_origins=[]
    )


def build_app(server: MCPServer, transport: str, host: str, token: str | None, allowed_hosts: list[str]) -> ASGIApp:
    @server.custom_route(HEALTH_PATH, methods=["GET"])
    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    security = security_settings(allowed_hosts)
    if transport == "sse":
        app = server.sse_app(host=host, transport_security=security)
    else:
        app = server.streamable_http_app(host=host, transport_security=security)
    return BearerTokenMiddleware(app, token) if token else app


def serve_http(
    server: MCPServer,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: list[str],
    log_level: str,
) -> None:
    """Run the server with uvicorn; its logs go to stderr and the access log is off."""
    import uvicorn

    app = build_app(server, transport, host, token, allowed_hosts)
    log_config = {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
        "loggers": {"uvicorn": {"handlers": ["stderr"], "level": log_level, "propagate": False}},
    }
    logging.getLogger(__name__).info("listening on http://%s:%d (%s)", host, port, transport)
    uvicorn.run(app, host=host, port=port, log_config=log_config, access_log=False, lifespan="on")
