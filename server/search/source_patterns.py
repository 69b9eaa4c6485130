"""A scope's "source" pattern: checked, then matched against every source at once in linear time.

pathspec translates a gitwildmatch pattern into a regular expression, and that translation is
what a pattern means here. Python's `re` backtracks on such expressions without bound ("?*?*…z"
against a long file name runs for hours, holding the GIL, so no other request is answered), so
the expression runs in Arrow's RE2 kernel instead (pyarrow.compute.match_substring_regex): RE2
matches in time linear in the text, without new dependencies, and over all sources in one call
outside the GIL. (pathspec's own re2 backend needs google-re2 and matches source by source
through an RE2::Set, which has no fallback when its DFA grows: measured slower.) RE2's DFA can
still grow exponentially with the one-character wildcards after a "*", so a pattern holds at
most MAX_PATTERN_WILDCARDS wildcards.

`problem` refuses what pathspec would reject or silently discard, and what RE2 would read
otherwise than Python's `re` (a POSIX class such as "[:alpha:]"), so a pattern admitted here
means the same as pathspec's own match.
"""

from __future__ import annotations

import pathspec
import pyarrow as pa
import pyarrow.compute as pc
from pathspec.util import normalize_file

from .limits import MAX_PATTERN_WILDCARDS


def problem(pattern: str) -> str | None:
    """What is wrong with `pattern` and how to fix it, as the end of a sentence about it; None if
    it is a pattern pathspec reads and RE2 matches as Python's `re` would."""
    if pattern.startswith("!"):
        return "starts with '!', which negates; a scope says what to include: drop the '!', or write '\\!' for a name that starts with '!'"
    wildcards = 0
    for segment in pattern.split("/"):
        position = 0
        while position < len(segment):
            char = segment[position]
            if char == "\\":
                if position + 1 == len(segment):
                    return "has a '\\' with nothing after it to escape (at its end or before a '/'); drop it, or write '\\\\' for a backslash"
                position += 2
                continue
            if char == "[":
                end = _bracket_end(segment, position)
                if end is None:
                    return "has an unclosed '[' (in one folder or file name); close it, as in '[abc]', or write '\\[' for a '['"
                wrong = _bracket_problem(segment[position + 1 : end])
                if wrong:
                    return wrong
                position = end
            if char in "*?[":
                wildcards += 1
            position += 1
            while char == "*" and position < len(segment) and segment[position] == "*":
                position += 1
    if wildcards > MAX_PATTERN_WILDCARDS:
        return (
            f"has {wildcards} wildcards; use at most {MAX_PATTERN_WILDCARDS} ('*', '**', '?' and '[...]' count "
            "one each; a '*' alone stands for any run of characters)"
        )
    return None


def _bracket_end(segment: str, start: int) -> int | None:
    """Where the bracket expression opened at `start` closes, as pathspec finds it: a ']' right
    after the '[' (or after its '!' or '^') is a member, the next one closes."""
    end = start + 1
    if end < len(segment) and segment[end] in "!^":
        end += 1
    if end < len(segment) and segment[end] == "]":
        end += 1
    end = segment.find("]", end)
    return None if end < 0 else end


def _bracket_problem(members: str) -> str | None:
    """A range that runs backwards (an error in both engines), or a POSIX class (a class in RE2,
    literal characters in Python's `re`); pathspec passes a bracket's members through as they are."""
    if "[:" in members:
        return "has a character class such as '[:alpha:]', which patterns here do not support; list the characters instead, as in '[a-zA-Z]'"
    members = members[1:] if members[:1] in ("!", "^") else members
    position = 0
    while position < len(members):
        if position + 2 < len(members) and members[position + 1] == "-":
            low, high = members[position], members[position + 2]
            if low > high:
                return f"has the range '{low}-{high}', which runs backwards; write it low to high, as '{high}-{low}'"
            position += 3
        else:
            position += 1
    return None


def matches(sources: pa.Array, pattern: str) -> pa.Array:
    """Which of `sources` the pattern matches, as a boolean array: what pathspec's GitIgnoreSpec
    of this one pattern says of each. `pattern` must have no `problem`."""
    [compiled] = pathspec.GitIgnoreSpec.from_lines([pattern]).patterns
    if compiled.regex is None:  # a pattern git ignores, such as "/": it matches nothing
        return pa.array([False] * len(sources), pa.bool_())
    normalized = pa.array([normalize_file(source) for source in sources.to_pylist()], pa.string())
    return pc.match_substring_regex(normalized, compiled.regex.pattern)
