"""HTTP transports (SSE, streamable HTTP): DNS-rebinding protection, optional bearer token, and
bounds on what clients may hold: sessions and requests per address (sessions.py), a deadline for
request headers (header_deadline.py), a connection limit within the descriptors the process may
open, and refusals logged once a minute per kind (refusals.py)."""

from __future__ import annotations

import hmac
import ipaddress
import logging

from arag_mcp.server.app import AragServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .refusals import RefusalLog, ServerRefusals
from .sessions import Limits, SessionLimits

HEALTH_PATH = "/health"
MAX_CONNECTIONS = 4096
"""uvicorn's concurrency limit: connections (or requests) above it are answered 503 and closed.
Idle connections close within seconds (keep-alive, the header deadline), so only a burst reaches it."""
SESSION_LOGGERS = ("mcp.server.streamable_http_manager", "mcp.server.streamable_http", "mcp.server.sse")
"""The SDK's loggers that write a line for every session opened and closed: a flood would be a
flood of lines, so they say only warnings unless the log level is DEBUG."""
RESERVED_DESCRIPTORS = 64
"""Descriptors kept for the index's files, logs and the listening socket when the limit is low."""


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


def build_app(
    server: AragServer,
    transport: str,
    host: str,
    token: str | None,
    allowed_hosts: list[str],
    refusals: RefusalLog | None = None,
    limits: Limits = Limits(),
) -> ASGIApp:
    @server.custom_route(HEALTH_PATH, methods=["GET"])
    async def health(_: Request) -> JSONResponse:
        """503 while the index is unusable, or while new clients are being refused (a load balancer
        then sends them elsewhere)."""
        status, body = server.health()
        if status == 200 and bounded.refused_recently():
            status, body = 503, {**body, "status": "refusing new clients"}
        return JSONResponse(body, status_code=status)

    security = security_settings(host, allowed_hosts)
    if transport == "sse":
        app = server.sse_app(host=host, transport_security=security)
    else:
        app = server.streamable_http_app(
            host=host, transport_security=security, session_idle_timeout=limits.idle_seconds, max_sessions=None
        )
    bounded = SessionLimits(app, transport, refusals or RefusalLog(), limits, open_paths=(HEALTH_PATH,))
    return BearerTokenMiddleware(bounded, token) if token else bounded


def serve_http(
    server: AragServer,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: list[str],
    log_level: str,
) -> None:
    """Run the server with uvicorn; its logs go to stderr and the access log is off."""
    import uvicorn

    from .header_deadline import HeaderDeadlineProtocol  # uvicorn's protocols: only where HTTP is served

    refusals = RefusalLog()
    ServerRefusals(refusals).install()
    if log_level != "DEBUG":
        for name in SESSION_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
    connections = connection_limit(raise_descriptor_limit())
    app = build_app(server, transport, host, token, allowed_hosts, refusals)
    protocol = type("Protocol", (HeaderDeadlineProtocol,), {"refusals": refusals})
    log_config = {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
        "loggers": {"uvicorn": {"handlers": ["stderr"], "level": log_level, "propagate": False}},
    }
    logging.getLogger(__name__).info(
        "listening on http://%s:%d (%s; at most %d connections)", host, port, transport, connections
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_config=log_config,
        access_log=False,
        lifespan="on",
        http=protocol,
        limit_concurrency=connections,
    )


UNLIMITED_TARGET = 65536
"""The soft limit asked for where the hard one is unlimited (macOS), which a soft one cannot be."""


def raise_descriptor_limit() -> int | None:
    """Raise the soft limit on open descriptors to the hard one (1,024 is a common soft default, far
    below the hard one); the limit now in force, or None where there is none."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft >= target:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        return soft
    return target


def connection_limit(descriptors: int | None) -> int:
    """MAX_CONNECTIONS, or fewer where the descriptors would not hold them and what the index needs."""
    if descriptors is None:
        return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, descriptors - RESERVED_DESCRIPTORS))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
