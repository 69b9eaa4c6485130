"""A scripted OpenAI-compatible chat-completions server on the loopback, for tests of the agent.

It replays a script of assistant replies (text, tool calls, judge verdicts) in order, or a function
of the request, and records every request body so tests can assert on what the model was sent.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]
Scripted = Reply | Callable[[dict[str, Any]], Reply]


def say(text: str) -> Reply:
    return {"content": text}


def call(*calls: tuple[str, dict[str, Any] | str]) -> Reply:
    """Tool calls; a str argument is sent as it is (to script malformed JSON)."""
    return {"tool_calls": [(name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls]}


class ScriptedLLM:
    def __init__(self) -> None:
        self.script: deque[Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.calls = 0
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.http.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def add(self, *replies: Scripted) -> None:
        self.script.extend(replies)

    def reset(self) -> None:
        with self.lock:
            self.script.clear()
            self.requests.clear()

    def _next(self, body: dict[str, Any]) -> dict[str, Any] | None:
        with self.lock:
            self.requests.append(body)
            if not self.script:
                return None
            scripted = self.script.popleft()
            self.calls += 1
            number = self.calls
        reply = scripted(body) if callable(scripted) else scripted
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = [
                {"id": f"call_{number}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(reply["tool_calls"])
            ]
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer = owner._next(body) if self.path.endswith("/chat/completions") else None
                status = 200 if answer else 400
                payload = json.dumps(answer or {"error": {"message": "script exhausted", "type": "invalid_request"}})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@contextmanager
def scripted_llm() -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM()
    thread = threading.Thread(target=llm.http.serve_forever, daemon=True)
    thread.start()
    try:
        yield llm
    finally:
        llm.http.shutdown()
        llm.http.server_close()


def tool_messages(request: dict[str, Any]) -> list[str]:
    """The tool results a request showed the model, in order."""
    return [message["content"] for message in request["messages"] if message["role"] == "tool"]
