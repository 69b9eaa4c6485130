"""`arag-mcp --watch`: the server keeps its index current by running `arag-index watch` beside it.

A child process, so that searches never wait on embedding (nor on the GIL it holds). Its stderr
lines go to the server's log and the last one to `arag://index`; each makes the server read the
index's manifest at its next request, which says whether a build was committed. Where another process already
watches the index (another server of it, one per chat or per host), the child stops at once; the
server says so once and tries again every RETRY_SECONDS, so that one of them takes over when that
watcher ends. The child is started with the server's pid and stops when the server is gone.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import datetime, timezone

log = logging.getLogger(__name__)

WATCHED_ELSEWHERE = 3
"""`arag-index watch`'s exit status where another watcher keeps the index current."""
RETRY_SECONDS = 30.0
STOP_SECONDS = 60.0
"""How long closing waits for the batch in hand before the child is killed (the index keeps its last commit)."""


class IndexWatcher:
    def __init__(self, uri: str, look_again: Callable[[], None], threads: int | None = None) -> None:
        """`look_again` is called at each line the watcher reports: the server then reads the
        manifest, which alone says whether a build was committed (no wording of a line is relied on)."""
        self.uri = uri
        self.look_again = look_again
        self.threads = threads
        self.state = "starting"
        self.last_line = ""
        self.last_line_at = ""
        self._process: subprocess.Popen[str] | None = None
        self._closing = threading.Event()
        self._spawning = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="arag-watch", daemon=True)
        self._thread.start()

    def status(self) -> dict[str, str]:
        """What the watcher is doing, for `arag://index`."""
        return {"state": self.state, "last_report": self.last_line, "last_report_at": self.last_line_at}

    def _command(self) -> list[str]:
        command = [
            sys.executable,
            "-m",
            "arag_mcp.indexer",
            "watch",
            "--index",
            self.uri,
            "--parent-pid",
            str(os.getpid()),
        ]
        return command + (["--threads", str(self.threads)] if self.threads else [])

    def _run(self) -> None:
        told_elsewhere = False
        while not self._closing.is_set():
            with self._spawning:
                if self._closing.is_set():
                    break
                self.state = "syncing"
                self._process = subprocess.Popen(
                    self._command(),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,  # stdout is the MCP protocol's
                    stderr=subprocess.PIPE,
                    text=True,
                )
            for line in self._process.stderr:
                self._report(line.rstrip())
            code = self._process.wait()
            if self._closing.is_set():
                break
            if code == WATCHED_ELSEWHERE:
                self.state = "another process watches this index; this server follows its commits"
                if not told_elsewhere:
                    log.info("another process watches %s; this server follows its commits", self.uri)
                    told_elsewhere = True
            else:
                self.state = f"stopped (exit status {code}); restarting in {RETRY_SECONDS:.0f} s"
                log.warning("the watcher of %s stopped (exit status %d): %s", self.uri, code, self.last_line)
            self._closing.wait(RETRY_SECONDS)

    def _report(self, line: str) -> None:
        if not line:
            return
        if line.startswith("watching "):
            self.state = "watching"
        if line.startswith("arag-index: another arag-index watch"):
            return
        self.last_line = line
        self.last_line_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        log.info("watch: %s", line)
        self.look_again()

    def close(self) -> None:
        """Stop the child: it finishes the batch in hand first (up to STOP_SECONDS)."""
        with self._spawning:
            self._closing.set()
            process = self._process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._thread is not None:
            self._thread.join(5)
