"""Headings of Markdown and reStructuredText, read in the text as written, and Markdown's front matter.

Markdown: ATX headings (`## Title`, level = number of #) and setext headings (a line underlined
with `===`, level 1, or `---`, level 2), none inside fenced code blocks. reStructuredText: a title
line underlined (optionally also overlined) with a repeated punctuation character; as in docutils,
levels go by the order in which adornment styles first appear.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex
import yaml

from .outline import HeadingMarks, HeadingStack

_FRONT_MATTER = regex.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", regex.S)
_ATX = regex.compile(r" {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*")
_FENCE = regex.compile(r" {0,3}(```|~~~)")
_SETEXT = regex.compile(r" {0,3}(=+|-+)[ \t]*")
_ADORNMENT = regex.compile(r"([=\-~^`'\"*+#:.!_])\1{2,}[ \t]*")
_LINK = regex.compile(r"\[([^\]]*)\]\([^)]*\)")


def split_front_matter(text: str) -> tuple[str, dict[str, object]]:
    """(text without its YAML front matter, the front matter's fields); front matter that is not a
    YAML mapping is left in the text."""
    found = _FRONT_MATTER.match(text)
    if not found:
        return text, {}
    try:
        fields = yaml.safe_load(found.group(1))
    except yaml.YAMLError:
        return text, {}
    if not isinstance(fields, dict):
        return text, {}
    return text[found.end() :], {str(key): value for key, value in fields.items()}


def markdown_headings(text: str) -> HeadingMarks:
    stack = HeadingStack()
    marks = []
    fence = None
    previous: tuple[int, str] | None = None
    for start, line in _lines(text):
        opened = _FENCE.match(line)
        if fence:
            fence = None if opened and opened.group(1) == fence else fence
            previous = None
            continue
        if opened:
            fence, previous = opened.group(1), None
            continue
        atx = _ATX.fullmatch(line)
        setext = _SETEXT.fullmatch(line)
        if atx:
            marks.append((start, stack.enter(len(atx.group(1)), _plain(atx.group(2)))))
            previous = None
        elif setext and previous:
            level = 1 if setext.group(1)[0] == "=" else 2
            marks.append((previous[0], stack.enter(level, _plain(previous[1]))))
            previous = None
        else:
            previous = (start, line) if line.strip() and not line.startswith((" ", "\t")) else None
    return tuple(marks)


def rst_headings(text: str) -> HeadingMarks:
    stack = HeadingStack()
    styles: list[tuple[str, bool]] = []
    marks = []
    lines = list(_lines(text))
    for at, (start, line) in enumerate(lines):
        if at == 0 or not _ADORNMENT.fullmatch(line):
            continue
        title_start, title = lines[at - 1]
        if not title.strip() or title[0].isspace() or _ADORNMENT.fullmatch(title):
            continue
        overlined = at >= 2 and lines[at - 2][1].rstrip() == line.rstrip()
        style = (line[0], overlined)
        if style not in styles:
            styles.append(style)
        marks.append(
            (lines[at - 2][0] if overlined else title_start, stack.enter(styles.index(style) + 1, title.strip()))
        )
    return tuple(marks)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    start = 0
    for line in text.split("\n"):
        yield start, line
        start += len(line) + 1


def _plain(heading: str) -> str:
    """A Markdown heading without its inline markup: links as their text, no code or emphasis marks."""
    return " ".join(_LINK.sub(r"\1", heading).replace("`", "").strip("*_ ").split())
