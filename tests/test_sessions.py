"""Read sets: per-session, expiring when idle, bounded in number."""

from __future__ import annotations

import time

from arag_mcp.server.sessions import ReadSets, new_handle


def test_sessions_are_separate():
    read_sets = ReadSets()
    read_sets.mark_read("a", ["x", "y"])
    assert read_sets.read_before("a", ["x", "z"]) == {"x"}
    assert read_sets.read_before("b", ["x"]) == set()


def test_idle_sessions_expire():
    read_sets = ReadSets(idle_seconds=0.05)
    read_sets.mark_read("old", ["x"])
    time.sleep(0.1)
    read_sets.mark_read("new", ["y"])
    assert read_sets.read_before("old", ["x"]) == set()
    assert len(read_sets) == 1


def test_number_of_sessions_is_bounded_least_recently_used_first():
    read_sets = ReadSets(max_sessions=3)
    for key in ["a", "b", "c"]:
        read_sets.mark_read(key, [key])
    read_sets.mark_read("a", ["a2"])
    read_sets.mark_read("d", ["d"])
    assert len(read_sets) == 3
    assert read_sets.read_before("b", ["b"]) == set()
    assert read_sets.read_before("a", ["a", "a2"]) == {"a", "a2"}


def test_handles_are_unique_and_short():
    handles = {new_handle() for _ in range(1000)}
    assert len(handles) == 1000 and all(len(h) <= 16 for h in handles)
