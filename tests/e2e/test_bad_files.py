"""`arag-index build` of a folder holding one bad or costly file beside a normal one: the build
ends with status 0, indexes the normal file and what the bad one holds that can be read, names
each file or record it skips in one line, and reads no file with more than a budget's memory.

Small files by default; ARAG_FULL_SIZES=1 builds them at the sizes of the issue (a 12 MB line,
a DOCX of 250 MB of XML, 150 MB of HTML), as bench/bad_files.py measures them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ..bad_files import (
    bad_front_matter,
    deep_jsonl,
    dense_docx,
    html_markup,
    html_text,
    huge_int_json,
    long_front_matter,
    one_line_run,
    one_line_words,
)
from ..bombs import MB
from ..conftest import run_cli

pytestmark = pytest.mark.slow

SCALE = 1.0 if os.environ.get("ARAG_FULL_SIZES") == "1" else 0.02
NORMAL = "# Radium\n\nRadium glows blue in the dark.\n"
READING_MEMORY = 1024 * MB
"""The budget of one file (--file-memory's default)."""

BUILD = """
import resource, sys
from pathlib import Path
from arag_mcp.indexer.cli import main
try:
    status = main(sys.argv[2:])
finally:
    peaks = [resource.getrusage(who).ru_maxrss * 1024 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    Path(sys.argv[1]).write_text(" ".join(map(str, peaks)))
sys.exit(status)
"""

CASES: dict[str, tuple[Callable[[Path], object], list[str], list[str]]] = {
    # name: (write the bad file(s) into a folder, sources indexed besides radium.md, the starts of the lines
    # of skips, and of notices about files indexed all the same)
    "deep-jsonl": (
        lambda folder: deep_jsonl(folder / "deep.jsonl", 600),
        ["docs/deep.jsonl", "docs/deep.jsonl"],
        ["skipped docs/deep.jsonl: line 2: record nested more than 100 levels deep"],
    ),
    "bad-front-matter": (
        lambda folder: (bad_front_matter(folder), huge_int_json(folder / "digits.json")),
        ["docs/date.md", "docs/digits.json", "docs/digits.json", "docs/digits.md", "docs/tag.md"],
        [
            "docs/date.md: indexed, front matter kept as text: day is out of range for month",
            "docs/digits.md: indexed, front matter kept as text: Exceeds the limit (4300 digits)",
            "docs/tag.md: indexed, front matter kept as text: invalid literal for int()",
        ],
    ),
    "one-line-run": (lambda folder: one_line_run(folder / "run.txt", int(12 * MB * SCALE)), ["docs/run.txt"], []),
    "one-line-words": (
        lambda folder: one_line_words(folder / "words.txt", int(12 * MB * SCALE)),
        ["docs/words.txt"],
        [],
    ),
    "dense-docx": (
        lambda folder: dense_docx(folder / "dense.docx", int(250 * MB * max(SCALE, 0.1))),
        [],
        ["skipped docs/dense.docx: unreadable: word/document.xml holds"],
    ),
    "html-text": (
        lambda folder: html_text(folder / "text.html", int(30 * MB * max(SCALE, 0.4))),
        [],
        ["skipped docs/text.html: unreadable: the page holds"],
    ),
    "html-markup": (
        lambda folder: html_markup(folder / "markup.html", int(150 * MB * max(SCALE, 0.03))),
        [],
        ["skipped docs/markup.html: unreadable: the page holds"],
    ),
    "front-matter": (
        lambda folder: long_front_matter(folder / "front.md", int(10 * MB * max(SCALE, 0.03))),
        ["docs/front.md"],
        ["docs/front.md: indexed, front matter of"],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_bad_file_costs_only_itself(tmp_path: Path, embedder, case: str):
    write, indexed, skips = CASES[case]
    corpus = tmp_path / "docs"
    corpus.mkdir()
    write(corpus)
    (corpus / "radium.md").write_text(NORMAL)
    peaks = tmp_path / "peaks"
    result = subprocess.run(
        [sys.executable, "-c", BUILD, str(peaks), "build", str(corpus), "--index", str(tmp_path / "idx"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith(("skipped docs/", "docs/"))]
    assert len(lines) == len(skips), lines
    for line, start in zip(sorted(lines), skips):
        assert line.startswith(start), line
    told_as_skips = sum(line.startswith("skipped docs/") for line in lines)
    assert (f"skipped {told_as_skips} file(s)" in result.stderr) == bool(told_as_skips), result.stderr[-2000:]
    listed = json.loads(run_cli("arag_mcp.indexer", "list", "--index", str(tmp_path / "idx"), "--json").stdout)
    assert sorted(document["source"] for document in listed) == sorted([*indexed, "docs/radium.md"])
    _, reader_peak = map(int, peaks.read_text().split())
    assert reader_peak < READING_MEMORY + 512 * MB, f"the reader held {reader_peak / MB:.0f} MB"


def test_a_file_over_the_memory_budget_is_skipped_and_read_again_by_the_next_sync(tmp_path: Path, embedder):
    """One record holding three million numbers: about 100 MB once parsed."""
    corpus = tmp_path / "docs"
    corpus.mkdir()
    numbers = ", ".join(["0.5"] * 3_000_000)
    (corpus / "numbers.json").write_text(f'{{"text": "Radium decays.", "values": [{numbers}]}}')
    (corpus / "radium.md").write_text(NORMAL)
    index = str(tmp_path / "idx")
    first = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", index, "--quiet", "--file-memory", "64")
    assert first.returncode == 0, first.stderr
    skips = [line for line in first.stderr.splitlines() if line.startswith("skipped docs/")]
    assert len(skips) == 1 and skips[0].startswith("skipped docs/numbers.json: "), skips
    assert skips[0].endswith("(limit --file-memory 64); raise --file-memory or exclude the file")
    again = run_cli("arag_mcp.indexer", "sync", "--index", index, "--quiet")
    assert again.returncode == 0, again.stderr
    assert "skipped" not in again.stderr
    listed = json.loads(run_cli("arag_mcp.indexer", "list", "--index", index, "--json").stdout)
    assert sorted(document["source"] for document in listed) == ["docs/numbers.json", "docs/radium.md"]
