"""Sessions and requests bounded per client address, so that a client that follows the rules is
never locked out by one that floods the server.

A session is a streamable-HTTP session (its `mcp-session-id`) or an SSE stream (`GET /sse`). Each
client address may hold MAX_SESSIONS_PER_CLIENT of them, all clients MAX_SESSIONS. A session that
made no call beyond the handshake (`initialize` and its notification) is closed once
UNUSED_SESSION_SECONDS have passed (checked at every request), and it is the first to go when its
client, or the server, is at the limit:
a flood of `initialize` requests then only displaces itself, and a host that calls its tools keeps
its session. At the server's limit, where every session has been used, the least recently active
one with nothing in flight goes, taken from the address that holds the most: clients on many
addresses that each keep their sessions alive with a ping displace each other, not a newcomer.
Only an address at its own limit of used sessions is refused, with 503 and `Retry-After`.

Requests: MAX_REQUESTS_PER_CLIENT in flight for one address, and at MAX_REQUESTS in all an address
may still send up to its share of them (MAX_REQUESTS over the addresses in flight), so that a
fresh address gets in while others fill the server, up to twice MAX_REQUESTS. A request body
(what tells a call from a handshake) must arrive within BODY_SECONDS: a POST whose body never
comes is answered 408 and its slot freed. Refusals are logged once a minute per kind, with a
count (refusals.py); `refused_recently` tells the health check where the server's own limits
refused someone (an address at its own limits is not a sign that newcomers are refused).

Used sessions still end by the SDK's idle timeout (SESSION_IDLE_SECONDS, passed to it), by the
client, or by a 404 from the SDK, which this module then forgets too.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .refusals import RefusalLog

MAX_SESSIONS_PER_CLIENT = 32
MAX_SESSIONS = 512
UNUSED_SESSION_SECONDS = 30.0
SESSION_IDLE_SECONDS = 30 * 60.0
MAX_REQUESTS = 900
MAX_REQUESTS_PER_CLIENT = 256
RETRY_AFTER_SECONDS = 10
BODY_SECONDS = 10.0
PEEK_BYTES = 64 * 1024
"""How much of a request body is read to tell a handshake from a call."""
HANDSHAKE = frozenset({"initialize", "notifications/initialized"})
SESSION_HEADER = b"mcp-session-id"
SSE_SESSION = re.compile(rb"session_id=([0-9a-fA-F]+)")


@dataclass(eq=False)
class Session:
    client: str
    opened: float
    end: anyio.CancelScope | None = None
    """An SSE stream's scope, cancelled to close it; None for a streamable-HTTP session."""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    """The Host and Origin of the request that opened a streamable-HTTP session, to end it as its client would."""
    used: bool = False
    in_flight: int = 0
    last_seen: float = 0.0

    @property
    def idle(self) -> bool:
        """No request in flight (an SSE stream's own aside): ending it to make room cuts no answer
        short (the SDK logs a traceback for an answer whose session ended under it)."""
        return self.in_flight <= (0 if self.end is None else 1)


@dataclass(frozen=True)
class Limits:
    per_client: int = MAX_SESSIONS_PER_CLIENT
    total: int = MAX_SESSIONS
    unused_seconds: float = UNUSED_SESSION_SECONDS
    idle_seconds: float = SESSION_IDLE_SECONDS
    requests: int = MAX_REQUESTS
    requests_per_client: int = MAX_REQUESTS_PER_CLIENT


class SessionLimits:
    """ASGI middleware over the SDK's HTTP app (`transport` "sse" or "streamable-http") that
    keeps sessions and requests within `limits`; paths in `open_paths` (the health check) pass."""

    def __init__(
        self,
        app: ASGIApp,
        transport: str,
        refusals: RefusalLog,
        limits: Limits = Limits(),
        open_paths: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.sse = transport == "sse"
        self.refusals = refusals
        self.limits = limits
        self.open_paths = open_paths
        self.sessions: dict[str, Session] = {}
        """By id, in the order they opened (an SSE stream is keyed by its scope until its id is known)."""
        self.opening: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        self.last_refusal = -float("inf")
        """When a session or request was last refused for the server's limits, which a newcomer
        meets too (an address refused for its own limits is not; anyio's clock)."""

    def refused_recently(self) -> bool:
        """Whether a newcomer would have been refused in the last RETRY_AFTER_SECONDS."""
        return anyio.current_time() - self.last_refusal < RETRY_AFTER_SECONDS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        in_flight = sum(self.requests.values())
        share = self.limits.requests // max(1, len(self.requests))
        if in_flight >= 2 * self.limits.requests or (
            in_flight >= self.limits.requests and self.requests[client] >= share
        ):
            self.last_refusal = anyio.current_time()  # a newcomer may be among those refused
            await self._refuse("requests in flight at the server's limit", "the server is busy", scope, receive, send)
            return
        if self.requests[client] >= self.limits.requests_per_client:
            await self._refuse(
                "requests in flight at one address's limit",
                "too many requests in flight from this address",
                scope,
                receive,
                send,
            )
            return
        self.requests[client] += 1
        try:
            await self._sweep(anyio.current_time())
            if self.sse:
                await self._sse(client, scope, receive, send)
            else:
                await self._streamable(client, scope, receive, send)
        finally:
            self.requests[client] -= 1
            if not self.requests[client]:
                del self.requests[client]

    async def _streamable(self, client: str, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _header(scope, SESSION_HEADER)
        session = self.sessions.get(session_id) if session_id else None
        if session is None:
            await self._streamable_request(client, None, session_id, scope, receive, send)
            return
        session.in_flight += 1  # from here on: a session with a request in flight is never ended to make room
        try:
            await self._streamable_request(client, session, session_id, scope, receive, send)
        finally:
            session.in_flight -= 1
            session.last_seen = anyio.current_time()

    async def _streamable_request(
        self, client: str, session: Session | None, session_id: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        peeked = await _peek(scope, receive)
        if peeked is None:
            await self._late_body(scope, receive, send)
            return
        body, receive = peeked
        if session is None and session_id is None and scope["method"] == "POST" and _methods(body) == {"initialize"}:
            if not await self._admit(client):
                await self._refuse_session(scope, receive, send)
                return
            kept = [(name, value) for name, value in scope["headers"] if name in (b"host", b"origin")]

            def opened(status: int, session_id: str | None) -> None:
                """Known from the moment the answer starts: the client may use it before the answer ends."""
                if session_id is not None and status < 400:
                    now = anyio.current_time()
                    self.sessions[session_id] = Session(client, now, headers=kept, last_seen=now)

            self.opening[client] += 1
            try:
                await self.app(scope, receive, _watching(send, opened))
            finally:
                self.opening[client] -= 1
            return
        if session is None:
            await self.app(scope, receive, send)
            return
        session.used = session.used or _is_call(body)
        statuses: list[int] = []
        await self.app(scope, receive, _watching(send, lambda status, _: statuses.append(status)))
        if scope["method"] == "DELETE" or statuses == [404]:
            self.sessions.pop(session_id, None)  # type: ignore[arg-type]

    async def _sse(self, client: str, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST":
            session_id = SSE_SESSION.search(scope.get("query_string", b""))
            session = self.sessions.get(session_id[1].decode()) if session_id else None
            peeked = await _peek(scope, receive)
            if peeked is None:
                await self._late_body(scope, receive, send)
                return
            body, receive = peeked
            if session is not None:
                session.used = session.used or _is_call(body)
                session.last_seen = anyio.current_time()
            await self.app(scope, receive, send)
            return
        if scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        if not await self._admit(client):
            await self._refuse_session(scope, receive, send)
            return
        now = anyio.current_time()
        session = Session(client, now, end=anyio.CancelScope(), last_seen=now, in_flight=1)
        key = f"stream-{id(session)}"
        self.sessions[key] = session
        response: dict[str, bool] = {"started": False, "complete": False}

        async def tracking(message: Message) -> None:
            nonlocal key
            if message["type"] == "http.response.start":
                response["started"] = True
                message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
            elif message["type"] == "http.response.body":
                found = SSE_SESSION.search(message.get("body", b"")) if key.startswith("stream-") else None
                if found and key in self.sessions:
                    self.sessions[found[1].decode()] = self.sessions.pop(key)
                    key = found[1].decode()
                response["complete"] = not message.get("more_body", False)
            await send(message)

        try:  # the stream is the connection's last answer: once it ends, so does the connection
            with session.end:
                await self.app(scope, receive, tracking)
            if response["started"] and not response["complete"]:  # closed here: end the stream as a server does
                with anyio.CancelScope(shield=True):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.sessions.pop(key, None)

    async def _admit(self, client: str) -> bool:
        """Whether `client` may open a session, after closing the oldest unused one where a limit is reached."""
        held = Counter(session.client for session in self.sessions.values()) + self.opening
        if held[client] >= self.limits.per_client:
            return await self._end_oldest_unused(client)
        if sum(held.values()) >= self.limits.total:
            if await self._end_oldest_unused(None) or await self._end_least_recent_idle(held):
                return True
            self.last_refusal = anyio.current_time()  # every session busy: a newcomer is refused too
            return False
        return True

    async def _end_oldest_unused(self, client: str | None) -> bool:
        for session_id, session in self.sessions.items():
            if not session.used and client in (None, session.client) and session.idle:
                await self._end(session_id)
                self.refusals.note("unused session closed to make room for a new one")
                return True
        return False

    async def _end_least_recent_idle(self, held: Counter[str]) -> bool:
        """End the least recently active session with nothing in flight (an SSE stream's own request
        aside) of the address that holds the most sessions."""
        idle = [(session_id, session) for session_id, session in self.sessions.items() if session.idle]
        if not idle:
            return False
        session_id, _ = min(idle, key=lambda item: (-held[item[1].client], item[1].last_seen))
        await self._end(session_id)
        self.refusals.note("idle session closed to make room for a new one at the server's limit")
        return True

    async def _sweep(self, now: float) -> None:
        """Close sessions unused for `unused_seconds`; forget used ones the SDK has let go idle."""
        for session_id, session in list(self.sessions.items()):
            if session_id not in self.sessions:
                continue
            if not session.used and now - session.opened >= self.limits.unused_seconds:
                await self._end(session_id)
                self.refusals.note(f"session without a call closed after {self.limits.unused_seconds:.0f} s")
            elif session.end is None and not session.in_flight and now - session.last_seen >= self.limits.idle_seconds:
                self.sessions.pop(session_id, None)

    async def _end(self, session_id: str) -> None:
        session = self.sessions.pop(session_id)
        if session.end is not None:
            session.end.cancel()
            return
        scope: Scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "DELETE",
            "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"",
            "headers": [*session.headers, (SESSION_HEADER, session_id.encode())],
            "client": (session.client, 0), "server": None, "state": {},
        }  # fmt: skip

        async def nothing() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(_: Message) -> None:
            pass

        with anyio.CancelScope(shield=True):
            await self.app(scope, nothing, discard)

    async def _refuse_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        limits = f"{self.limits.per_client} sessions in use from this address, or {self.limits.total} in all"
        await self._refuse("new session above the session limit", limits, scope, receive, send)

    async def _late_body(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.refusals.note(f"request body not received within {BODY_SECONDS:.0f} s")
        response = PlainTextResponse(
            f"the request body did not arrive within {BODY_SECONDS:.0f} s",
            status_code=408,
            headers={"Connection": "close"},
        )
        await response(scope, receive, send)

    async def _refuse(self, kind: str, why: str, scope: Scope, receive: Receive, send: Send) -> None:
        self.refusals.note(kind)
        response = PlainTextResponse(
            f"{why}; retry in {RETRY_AFTER_SECONDS} s",
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
        await response(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    value = next((value for key, value in scope["headers"] if key == name), None)
    return value.decode("latin-1") if value is not None else None


async def _peek(scope: Scope, receive: Receive) -> tuple[bytes, Receive] | None:
    """Up to PEEK_BYTES of a POST body, and a `receive` that hands the whole body on as it came;
    None where that much did not arrive within BODY_SECONDS."""
    if scope["method"] != "POST":
        return b"", receive
    read: list[Message] = []
    size = 0
    with anyio.move_on_after(BODY_SECONDS) as waited:
        while size <= PEEK_BYTES:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                break
    if waited.cancelled_caught:
        return None
    body = b"".join(message.get("body", b"") for message in read if message["type"] == "http.request")

    async def replay() -> Message:
        return read.pop(0) if read else await receive()

    return body[:PEEK_BYTES], replay


def _methods(body: bytes) -> set[str] | None:
    """The JSON-RPC methods of a request body (a response counts as the method ""); None where it is not JSON-RPC."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return None
    messages = parsed if isinstance(parsed, list) else [parsed]
    if not all(isinstance(message, dict) for message in messages):
        return None
    return {str(message.get("method", "")) for message in messages}


def _is_call(body: bytes) -> bool:
    """Whether a body holds anything beyond the handshake: a call, a reply, a ping (no body: a stream, not a call)."""
    if not body:
        return False
    methods = _methods(body)
    return methods is None or not methods <= HANDSHAKE


def _watching(send: Send, started: Callable[[int, str | None], None]) -> Send:
    """`send`, telling `started` the response's status and session id before the response goes out."""

    async def watched(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers", [])
            session_id = next(
                (value.decode("latin-1") for key, value in headers if key.lower() == SESSION_HEADER), None
            )
            started(message["status"], session_id)
        await send(message)

    return watched
