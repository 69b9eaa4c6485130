"""uvicorn's h11 protocol with a deadline for each request's headers.

uvicorn closes an idle keep-alive connection, but not one that keeps sending a header line every
few seconds: such sockets stay open for good, and enough of them use up the descriptors. Here a
connection that has not sent a whole request head within HEADER_SECONDS of opening, or of the end
of its last response, is closed.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

from .refusals import RefusalLog

HEADER_SECONDS = 10.0


class HeaderDeadlineProtocol(H11Protocol):
    """H11Protocol that closes a connection whose next request's headers are late."""

    refusals: RefusalLog | None = None
    """Where closed connections are counted; set by the server before it starts."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._expect_headers()

    def _expect_headers(self) -> None:
        self.loop.call_later(HEADER_SECONDS, self._headers_due, self.cycle)

    def _headers_due(self, waited_after: RequestResponseCycle | None) -> None:
        """Close the connection if no request began since `waited_after`, the cycle current when
        the wait began (a request still being answered is never cut)."""
        late = self.cycle is waited_after and (waited_after is None or waited_after.response_complete)
        if late and not self.transport.is_closing():
            if self.refusals is not None:
                self.refusals.note(f"request headers not complete within {HEADER_SECONDS:.0f} s; connection closed")
            self.transport.close()
