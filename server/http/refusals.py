"""Refusals logged once a minute per kind, with a count: a flood of refused connections must not
become a flood of log lines (one traceback per refused accept filled 110 MB of log)."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("arag_mcp.server.http")

LOG_EVERY_SECONDS = 60.0
UVICORN_BUSY = "Exceeded concurrency limit."
"""What uvicorn logs for each request above its concurrency limit."""
ACCEPT_FAILED = "socket.accept() out of system resource"
"""What asyncio logs, with a traceback, each time accept fails for want of descriptors."""


class RefusalLog:
    """Counts refusals by kind; logs the first of a kind at once, then at most once a minute with
    how many there were since."""

    def __init__(self, every_seconds: float = LOG_EVERY_SECONDS) -> None:
        self.every_seconds = every_seconds
        self._counts: dict[str, int] = {}
        self._logged_at: dict[str, float] = {}

    def note(self, kind: str) -> None:
        self._counts[kind] = self._counts.get(kind, 0) + 1
        now = time.monotonic()
        if now - self._logged_at.get(kind, -self.every_seconds) >= self.every_seconds:
            count = self._counts.pop(kind)
            self._logged_at[kind] = now
            log.warning("refused: %s (%d in the last %.0f s)", kind, count, self.every_seconds)


class ServerRefusals(logging.Filter):
    """Turns uvicorn's line per refused request and asyncio's traceback per failed accept into
    counted refusals."""

    KINDS = {
        UVICORN_BUSY: "connection limit reached; answered 503",
        ACCEPT_FAILED: "out of file descriptors; connections wait in the listen queue",
    }

    def __init__(self, refusals: RefusalLog) -> None:
        super().__init__()
        self.refusals = refusals

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        kind = next((kind for start, kind in self.KINDS.items() if message.startswith(start)), None)
        if kind is None:
            return True
        self.refusals.note(kind)
        return False

    def install(self) -> None:
        for name in ("uvicorn.error", "asyncio"):
            logging.getLogger(name).addFilter(self)
