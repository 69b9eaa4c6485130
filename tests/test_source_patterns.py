"""Source patterns: every pattern admitted matches as pathspec's gitwildmatch does (Python's `re`
being the reference), and every pattern pathspec refuses is named with its fix."""

from __future__ import annotations

import random

import pathspec
import pyarrow as pa
import pytest
from arag_mcp.server.search.limits import MAX_PATTERN_WILDCARDS
from arag_mcp.server.search.source_patterns import matches, problem

SOURCES = [
    "kb/guide/install.md",
    "kb/guide/usage.md",
    "kb/api/pump.html",
    "kb/records/parts.jsonl",
    "a",
    "b/a",
    "a/b",
    "ab/ba.z",
    "a-b/[x]/c:d",
    "/a/b",
    "./ab",
    "a\\b",
    "!a",
    "#a",
    "é/ü.md",
]
PIECES = ["a", "b", "z", ".", "/", "*", "**", "?", "[", "]", "!", "^", "-", "\\", ":", "#", " ", "é"]
CHOSEN = [
    "kb/guide",
    "*.md",
    "kb/**/*.html",
    "**/a",
    "a/**",
    "a/**/b",
    "**",
    "**/",
    "/a",
    "a/",
    "[!a]*",
    "[^a]*",
    "[]a]",
    "[a-]",
    "[-a]",
    "[\\]",
    "[a-b-z]",
    "\\[x]",
    "#a",
    "\\#a",
    "\\!a",
    "a/\\*",
    "[[:alpha:]]*",
    "[[:digit:]]",
    "?" * MAX_PATTERN_WILDCARDS,
]


def random_patterns(count: int) -> list[str]:
    rng = random.Random(7)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))) for _ in range(count)]


def test_an_admitted_pattern_matches_as_pathspec_does_and_a_refused_one_is_named():
    admitted = 0
    for pattern in CHOSEN + random_patterns(3000):
        try:
            spec = pathspec.GitIgnoreSpec.from_lines([pattern], backend="simple")
        except Exception:
            assert problem(pattern), pattern
            continue
        if problem(pattern) is None:
            expected = [spec.match_file(source) for source in SOURCES]
            assert matches(pa.array(SOURCES), pattern).to_pylist() == expected, pattern
            admitted += 1
    assert admitted > 1000


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        ("[z-a]", "the range 'z-a', which runs backwards; write it low to high, as 'a-z'"),
        ("[!^-A]", "the range '^-A'"),
        ("a\\", "a '\\' with nothing after it to escape"),
        ("a\\/b", "a '\\' with nothing after it to escape"),
        ("a[/]b", "an unclosed '['"),
        ("[[:alpha:]]", "a character class such as '[:alpha:]'"),
        ("!a", "starts with '!'"),
        ("?*" * 20 + "z", f"has 40 wildcards; use at most {MAX_PATTERN_WILDCARDS}"),
        ("*a" + "?" * MAX_PATTERN_WILDCARDS, f"use at most {MAX_PATTERN_WILDCARDS}"),
    ],
)
def test_problems_are_named_with_their_fix(pattern: str, named: str):
    assert named in problem(pattern)


def test_runs_of_stars_and_escaped_wildcards_do_not_count():
    assert problem("**/" + "a***b" * (MAX_PATTERN_WILDCARDS - 1)) is None
    assert problem("\\*\\?\\[" * 20) is None
