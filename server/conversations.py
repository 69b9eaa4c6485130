"""Conversations: which chunk texts and document lines each conversation has received, so "read
before" is only ever said to the conversation that received the text.

A conversation is named by a handle the server issues: a tool call that brings no `session`
starts a new conversation, and its result carries the handle to pass back. The same rule holds on
every transport and protocol era, because a transport session does not tell conversations apart
(a desktop host keeps one stdio process for all its chats; the 2026-07-28 protocol keeps no
session at all). Only handles this server issued are accepted. A conversation idle for
`idle_seconds` is forgotten; past `max_conversations` the least recently used go first, with a
warning in the log.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from arag_mcp.indexer.documents import DocumentLines
    from arag_mcp.indexer.reader import Chunk

log = logging.getLogger(__name__)

IDLE_SECONDS = 3600.0
MAX_CONVERSATIONS = 100_000
HANDLE_PATTERN = re.compile(r"s-[A-Za-z0-9_-]{12}")
MAX_READ_CHARS = 40_000
"""Chunk text sent in one answer at most; what does not fit is named for a later call."""

DeliveryStatus = Literal["ok", "read_before", "not_found", "not_sent"]


def new_handle() -> str:
    return "s-" + secrets.token_urlsafe(9)


@dataclass
class Conversation:
    handle: str
    received: set[str] = field(default_factory=set)
    """Ids of the chunks whose full text this conversation was sent."""
    shown_lines: dict[str, set[int]] = field(default_factory=dict)
    """Document key → the numbered lines of it this conversation was sent (find, open)."""
    notice: str = ""
    """Said once to the model: why a handle it passed was not resumed."""


@dataclass(frozen=True)
class Delivery:
    """What one answer does with one requested chunk."""

    chunk_id: str
    status: DeliveryStatus
    chunk: Chunk | None = None


class Conversations:
    def __init__(self, idle_seconds: float = IDLE_SECONDS, max_conversations: int = MAX_CONVERSATIONS) -> None:
        self.idle_seconds = idle_seconds
        self.max_conversations = max_conversations
        self._by_handle: OrderedDict[str, tuple[float, Conversation]] = OrderedDict()
        self._lock = threading.Lock()

    def resume(self, handle: str | None) -> Conversation:
        """The conversation `handle` names, or a new one (with a notice when a handle was given)."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            if handle is not None and handle in self._by_handle:
                _, conversation = self._by_handle.pop(handle)
                conversation.notice = ""
            else:
                conversation = Conversation(new_handle())
                if handle is not None:
                    conversation.notice = _unknown_handle_notice(handle, conversation.handle)
            self._by_handle[conversation.handle] = (now, conversation)
            if len(self._by_handle) > self.max_conversations:
                self._by_handle.popitem(last=False)
                log.warning(
                    "more than %d conversations at once: forgot the least recently used", self.max_conversations
                )
            return conversation

    def deliver(
        self,
        conversation: Conversation,
        wanted: Sequence[str],
        found: Mapping[str, Chunk],
        max_chars: int = MAX_READ_CHARS,
    ) -> list[Delivery]:
        """Decide, in the order asked, which chunk texts to send: not those the conversation already
        received, at most `max_chars` of text (the first one always); the sent ones become received."""
        deliveries = []
        size = 0
        with self._lock:
            for cid in wanted:
                chunk = found.get(cid)
                if cid in conversation.received:
                    deliveries.append(Delivery(cid, "read_before"))
                elif chunk is None:
                    deliveries.append(Delivery(cid, "not_found"))
                elif size and size + len(chunk.text) > max_chars:
                    deliveries.append(Delivery(cid, "not_sent", chunk))
                else:
                    deliveries.append(Delivery(cid, "ok", chunk))
                    conversation.received.add(cid)
                    size += len(chunk.text)
        return deliveries

    def mark_received(self, conversation: Conversation, chunk_ids: Iterable[str]) -> None:
        """Record chunks whose whole text reached the conversation some other way (a search result
        that is the whole chunk), so that chunk_read does not send it again."""
        with self._lock:
            conversation.received.update(chunk_ids)

    def lines_seen(self, conversation: Conversation, document: DocumentLines) -> set[int]:
        """The lines of `document` this conversation has: sent as lines, or within a chunk it received."""
        with self._lock:
            seen = set(conversation.shown_lines.get(document.doc_key, ()))
            for index, cid in enumerate(document.chunk_ids):
                if cid in conversation.received:
                    seen.update(document.chunk_lines(index))
        return seen

    def mark_lines_shown(self, conversation: Conversation, document: DocumentLines, lines: Iterable[int]) -> None:
        """Record lines as sent; a chunk all of whose lines the conversation now has counts as received."""
        with self._lock:
            shown = conversation.shown_lines.setdefault(document.doc_key, set())
            shown.update(lines)
            for index, cid in enumerate(document.chunk_ids):
                if cid not in conversation.received and shown.issuperset(document.chunk_lines(index)):
                    conversation.received.add(cid)

    def _expire(self, now: float) -> None:
        while self._by_handle:
            handle, (last_used, _) = next(iter(self._by_handle.items()))
            if now - last_used <= self.idle_seconds:
                break
            del self._by_handle[handle]

    def __len__(self) -> int:
        return len(self._by_handle)


def _unknown_handle_notice(given: str, issued: str) -> str:
    shown = given[:24] + ("…" if len(given) > 24 else "")
    why = "is not one this server issued" if not HANDLE_PATTERN.fullmatch(given) else "is unknown or expired"
    return f"session {shown!r} {why}; this call starts a new conversation ({issued}): nothing counts as read yet."
