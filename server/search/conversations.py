"""Conversations: which chunk texts, snippet sentences and document lines each conversation has
received, so that a text is sent to a conversation once, and "read before" or "already sent" is
only ever said to the conversation that received it, with the call that sent it.

A conversation is named by a handle the server issues: a tool call that brings no `conversation`
starts a new conversation, and its result carries the handle to pass back. The same rule holds on
every transport and protocol era, because a transport session does not tell conversations apart
(a desktop host keeps one stdio process for all its chats; the 2026-07-28 protocol keeps no
session at all). Only handles this server issued are accepted. A conversation idle for
`idle_seconds` is forgotten; past `max_conversations`, or past `max_bytes` of what all
conversations remember together, the least recently used go first, with a warning in the log.
What one remembers is counted as about ENTRY_BYTES per chunk id, snippet sentence, document and run
of lines sent (lines are held as runs, so an `open` window costs one entry, not one per line).
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

from .line_runs import LineRuns
from .snippets import Excerpt, Snippet, sentence_key, snippet

if TYPE_CHECKING:
    from arag_mcp.indexer.index.chunks import Chunk
    from arag_mcp.indexer.index.document_lines import DocumentLines

log = logging.getLogger(__name__)

IDLE_SECONDS = 3600.0
MAX_CONVERSATIONS = 100_000
MAX_BYTES = 256 * 2**20
"""What all conversations remember together, at most (as counted with ENTRY_BYTES)."""
ENTRY_BYTES = 100
"""About what remembering one chunk id, document or run of lines costs: the string or numbers and
their slot in a set, dict or list (bench/memory.py measures a whole conversation)."""
HANDLE_PATTERN = re.compile(r"c-[A-Za-z0-9_-]{12}")
MAX_READ_CHARS = 40_000
"""Chunk text sent in one answer at most; what does not fit is named for a later call."""

DeliveryStatus = Literal["ok", "read_before", "not_found", "not_sent"]


def new_handle() -> str:
    return "c-" + secrets.token_urlsafe(9)


@dataclass(frozen=True)
class Origin:
    """Which call of a conversation sent a text: its number (from 1), its tool and, for a search,
    the result's rank."""

    call: int
    tool: str
    result: int | None = None

    def __str__(self) -> str:
        return f"call {self.call} ({self.tool}" + (f", result [{self.result}])" if self.result else ")")


@dataclass
class Conversation:
    handle: str
    calls: int = 0
    """Tool calls made in it so far, this one included."""
    received: dict[str, Origin] = field(default_factory=dict)
    """The chunks whose full text this conversation was sent, by id, with the call that sent it."""
    sent_sentences: dict[str, set[int]] = field(default_factory=dict)
    """Chunk id → the keys (snippets.sentence_key) of the snippet sentences of it this conversation was sent."""
    shown_lines: dict[str, LineRuns] = field(default_factory=dict)
    """Document key → the numbered lines of it this conversation was sent (find, open)."""
    line_origins: dict[str, list[tuple[int, int, Origin]]] = field(default_factory=dict)
    """Document key → (start, stop, call) of each run of lines sent, in the order sent."""
    notice: str = ""
    """Said once to the model: why a handle it passed was not resumed."""
    counted: int = 0
    """Its bytes in the total of `Conversations`, as last counted."""

    def remembered_bytes(self) -> int:
        runs = sum(len(lines) for lines in self.shown_lines.values())
        runs += sum(len(origins) for origins in self.line_origins.values())
        sentences = sum(len(keys) for keys in self.sent_sentences.values())
        chunks = len(self.sent_sentences)
        return ENTRY_BYTES * (1 + len(self.received) + chunks + sentences + len(self.shown_lines) + runs)


@dataclass(frozen=True)
class Delivery:
    """What one answer does with one requested chunk."""

    chunk_id: str
    status: DeliveryStatus
    chunk: Chunk | None = None


class Conversations:
    def __init__(
        self, idle_seconds: float = IDLE_SECONDS, max_conversations: int = MAX_CONVERSATIONS, max_bytes: int = MAX_BYTES
    ) -> None:
        self.idle_seconds = idle_seconds
        self.max_conversations = max_conversations
        self.max_bytes = max_bytes
        self.remembered_bytes = 0
        """What the live conversations remember together, as counted."""
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
            conversation.calls += 1
            self._by_handle[conversation.handle] = (now, conversation)
            self._count(conversation)
            if len(self._by_handle) > self.max_conversations:
                self._forget_oldest()
                log.warning(
                    "more than %d conversations at once: forgot the least recently used", self.max_conversations
                )
            return conversation

    def deliver(
        self,
        conversation: Conversation,
        wanted: Sequence[str],
        found: Mapping[str, Chunk],
        origins: Sequence[Origin],
        max_chars: int = MAX_READ_CHARS,
        again: bool = False,
    ) -> list[Delivery]:
        """Decide, in the order asked, which chunk texts to send: not those the conversation already
        received (unless `again`: a host that lost them from its context), at most `max_chars` of
        text (the first one always); the sent ones become received, each from its origin (the call,
        and a search's result, that sends it)."""
        deliveries = []
        size = 0
        with self._lock:
            for cid, origin in zip(wanted, origins):
                chunk = found.get(cid)
                if cid in conversation.received and not again:
                    deliveries.append(Delivery(cid, "read_before"))
                elif chunk is None:
                    deliveries.append(Delivery(cid, "not_found"))
                elif size and size + len(chunk.text) > max_chars:
                    deliveries.append(Delivery(cid, "not_sent", chunk))
                else:
                    deliveries.append(Delivery(cid, "ok", chunk))
                    conversation.received[cid] = origin
                    size += len(chunk.text)
            self._count(conversation)
        return deliveries

    def send_snippet(self, conversation: Conversation, chunk_id: str, found: Excerpt, origin: Origin) -> Snippet:
        """What a search result (`origin`) shows of its excerpt (snippets.snippet): not the sentences the
        conversation was sent, as snippets or in its chunk's whole text; the shown ones become sent, and
        the chunk received once the conversation has all of it."""
        with self._lock:
            if chunk_id in conversation.received:
                return Snippet([], 0, len(found.sentences), True, found.chunk_sentences)
            sent = conversation.sent_sentences.get(chunk_id, set())
            shown = snippet(found, sent)
            if shown.shown:
                conversation.sent_sentences.setdefault(chunk_id, set()).update(map(sentence_key, shown.shown))
            if shown.whole:
                conversation.received[chunk_id] = origin
                conversation.sent_sentences.pop(chunk_id, None)
            self._count(conversation)
        return shown

    def received(self, conversation: Conversation) -> set[str]:
        """The ids of the chunks whose whole text this conversation has."""
        with self._lock:
            return set(conversation.received)

    def has_all_of(self, conversation: Conversation, chunk_id: str, sentences: list[str]) -> bool:
        """Whether the conversation was sent every one of these excerpt sentences of a chunk (or its whole text):
        a result showing them would bring nothing new."""
        with self._lock:
            if chunk_id in conversation.received:
                return True
            sent = conversation.sent_sentences.get(chunk_id, set())
            return bool(sentences) and all(sentence_key(sentence) in sent for sentence in sentences)

    def lines_seen(self, conversation: Conversation, document: DocumentLines) -> dict[int, Origin]:
        """The lines of `document` this conversation has, each with the call that first sent it: as
        lines, or within a chunk it received."""
        with self._lock:
            sent: list[tuple[int, int, Origin]] = list(conversation.line_origins.get(document.doc_key, []))
            for index, cid in enumerate(document.chunk_ids):
                origin = conversation.received.get(cid)
                if origin is not None:
                    lines = document.chunk_lines(index)
                    sent.append((lines.start, lines.stop, origin))
        seen: dict[int, Origin] = {}
        for start, stop, origin in sorted(sent, key=lambda run: run[2].call):
            for line in range(start, stop):
                seen.setdefault(line, origin)
        return seen

    def mark_lines_shown(
        self, conversation: Conversation, document: DocumentLines, lines: Iterable[int], origin: Origin
    ) -> None:
        """Record lines as sent by `origin`; a chunk all of whose lines the conversation now has counts
        as received."""
        with self._lock:
            shown = conversation.shown_lines.setdefault(document.doc_key, LineRuns())
            runs = LineRuns()
            runs.add(lines)
            shown.add(runs)
            conversation.line_origins.setdefault(document.doc_key, []).extend(
                (start, stop, origin) for start, stop in zip(runs.starts, runs.stops)
            )
            for index, cid in enumerate(document.chunk_ids):
                if cid not in conversation.received and shown.covers(document.chunk_lines(index)):
                    conversation.received[cid] = origin
            self._count(conversation)

    def _count(self, conversation: Conversation) -> None:
        """Bring the total up to date with what `conversation` remembers now; past `max_bytes`,
        forget the least recently used (this one too, should it alone exceed the budget)."""
        if self._by_handle.get(conversation.handle, (0.0, None))[1] is not conversation:
            return  # already forgotten: what it gains is freed with it
        size = conversation.remembered_bytes()
        self.remembered_bytes += size - conversation.counted
        conversation.counted = size
        if self.remembered_bytes > self.max_bytes:
            while self.remembered_bytes > self.max_bytes and self._by_handle:
                self._forget_oldest()
            log.warning(
                "conversations remember more than %d MB together: forgot the least recently used",
                self.max_bytes // 2**20,
            )

    def _forget_oldest(self) -> None:
        _, (_, conversation) = self._by_handle.popitem(last=False)
        self.remembered_bytes -= conversation.counted

    def _expire(self, now: float) -> None:
        while self._by_handle:
            _, (last_used, _) = next(iter(self._by_handle.items()))
            if now - last_used <= self.idle_seconds:
                break
            self._forget_oldest()

    def __len__(self) -> int:
        return len(self._by_handle)


def _unknown_handle_notice(given: str, issued: str) -> str:
    shown = given[:24] + ("…" if len(given) > 24 else "")
    why = "is not one this server issued" if not HANDLE_PATTERN.fullmatch(given) else "is unknown or expired"
    return f"conversation {shown!r} {why}; this call starts a new conversation ({issued}): nothing counts as read yet."
