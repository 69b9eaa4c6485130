"""A run's `traces.jsonl`: one JSON record per finished question, appended as questions finish.

An interruption can cut the last line anywhere, even inside a UTF-8 character. That line is
dropped, so its question is answered again, and cut off the file, so that the next record starts
on a line of its own. An unreadable line before the last was not left by an interruption: the run
stops and names the file and the line rather than guess what else is wrong.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class TracesError(Exception):
    """A traces file holds a line that no interruption leaves (one line, with the fix)."""


def resume_traces(path: Path) -> dict[str, dict[str, Any]]:
    """The finished questions' records by id; the file is left ready for appending (a torn last
    line cut off, a missing final newline added)."""
    if not path.is_file():
        return {}
    data = path.read_bytes()
    done: dict[str, dict[str, Any]] = {}
    lines = data.split(b"\n")
    filled = [number for number, line in enumerate(lines) if line.strip()]
    start = 0
    for number, line in enumerate(lines):
        record = _record(line) if line.strip() else None
        if record is not None:
            done[record["id"]] = record
        elif line.strip() and number == filled[-1]:
            os.truncate(path, start)
            return done
        elif line.strip():
            raise TracesError(
                f"{path} line {number + 1} is not a trace record; delete that line (its question is then "
                "answered again) or pass a new --out"
            )
        start += len(line) + 1
    if data and not data.endswith(b"\n"):
        with path.open("ab") as traces:
            traces.write(b"\n")
    return done


def append_trace(path: Path, record: dict[str, Any]) -> None:
    """One finished question's record as one line."""
    with path.open("a", encoding="utf-8") as traces:
        traces.write(json.dumps(record, ensure_ascii=False) + "\n")


def _record(line: bytes) -> dict[str, Any] | None:
    """A line's record, or None where the line is not a whole record with an id."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("id"), str) else None
