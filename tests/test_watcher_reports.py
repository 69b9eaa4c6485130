"""The server learns of its watcher's commits from the manifest: any line the watcher reports makes
it look, whatever the line says."""

from __future__ import annotations

from arag_mcp.server.watching import IndexWatcher


def test_every_line_the_watcher_reports_makes_the_server_look_at_the_manifest():
    looks: list[str] = []
    watcher = IndexWatcher("/nowhere", lambda: looks.append("look"))
    for line in ("watching /docs (3 sources)", "+2 ~1 -0 in 1.4 s; 3,141 documents", "a commit worded otherwise", ""):
        watcher._report(line)
    assert looks == ["look"] * 3  # an empty line says nothing
    assert watcher.state == "watching" and watcher.last_line == "a commit worded otherwise"
