"""HTTP transports (SSE, streamable HTTP): DNS-rebinding protection, optional bearer token."""

from __future__ import annotations

import hmac
import ipaddress
import logging

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

HEALTH_PATH = "/health"


class BearerTokenMiddleware:
    """Reject HTTP requests that lack `Authorization: Bearer <token>` (the health check is open).

    The scheme name is case-insensitive (RFC 7235); the token is compared in constant time.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != HEALTH_PATH:
            scheme, _, credentials = dict(scope["headers"]).get(b"authorization", b"").partition(b" ")
            accepted = hmac.compare_digest(credentials.strip(b" "), self.expected)
            if not (accepted and scheme.lower() == b"bearer"):
                response = PlainTextResponse(
                    "missing or wrong bearer token", status_code=401, headers={"WWW-Authenticate": "Bearer"}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def security_settings(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings | None:
    """Host and Origin checks against DNS rebinding.

    An explicit Host allow-list when given. On a loopback bind, whatever its spelling (127.0.0.2,
    0:0:0:0:0:0:0:1), the loopback names and the bound address; the SDK's own default covers only
    127.0.0.1, localhost and ::1. Elsewhere none: a bearer token is required there instead.
    """
    if allowed_hosts:
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts, allowed_origins=[]
        )
    if not is_loopback(host):
        return None
    names = dict.fromkeys(["127.0.0.1", "localhost", "[::1]", *_host_names(host)])
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


def _host_names(host: str) -> list[str]:
    """The bound address as it appears in a Host header: as given and canonical, IPv6 in brackets."""
    try:
        spellings = [host, str(ipaddress.ip_address(host))]
    except ValueError:
        return [host]
    return [f"[{name}]" if ":" in name else name for name in spellings]


def build_app(server: MCPServer, transport: str, host: str, token: str | None, allowed_hosts: list[str]) -> ASGIApp:
    @server.custom_route(HEALTH_PATH, methods=["GET"])
    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    security = security_settings(host, allowed_hosts)
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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
