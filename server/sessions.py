"""Which chunks each MCP session has read, for chunk_read's "read before" notices."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable


def new_handle() -> str:
    """An explicit session handle for transports with no stable session of their own."""
    return "s-" + secrets.token_urlsafe(9)


class ReadSets:
    """Read chunk ids per session key; idle sessions expire and the number kept is bounded."""

    def __init__(self, idle_seconds: float = 3600.0, max_sessions: int = 1000) -> None:
        self.idle_seconds = idle_seconds
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, tuple[float, set[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def read_before(self, key: str, chunk_ids: Iterable[str]) -> set[str]:
        """Those of `chunk_ids` that session `key` has read."""
        with self._lock:
            _, seen = self._sessions.get(key, (0.0, set()))
            return seen.intersection(chunk_ids)

    def mark_read(self, key: str, chunk_ids: Iterable[str]) -> None:
        """Record `chunk_ids` as read in session `key` (which becomes the most recently used)."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            _, seen = self._sessions.pop(key, (now, set()))
            seen.update(chunk_ids)
            self._sessions[key] = (now, seen)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)

    def _expire(self, now: float) -> None:
        while self._sessions:
            key, (last_used, _) = next(iter(self._sessions.items()))
            if now - last_used <= self.idle_seconds:
                break
            del self._sessions[key]

    def __len__(self) -> int:
        return len(self._sessions)
