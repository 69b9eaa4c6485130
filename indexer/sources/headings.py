"""Headings of Markdown and reStructuredText, read in the text as written, and Markdown's front matter.

Markdown: ATX headings (`## Title`, level = number of #) and setext headings (a line underlined
with `===`, level 1, or `---`, level 2), none inside fenced code blocks. reStructuredText: a title
line underlined (optionally also overlined) with a repeated punctuation character; as in docutils,
levels go by the order in which adornment styles first appear.

Front matter is loaded only where it is short (`FRONT_MATTER_LIMIT`) and once its aliases are known
to stay small (`ALIAS_GROWTH_LIMIT`).
"""

from __future__ import annotations

from collections.abc import Iterator

import regex
import yaml

from .outline import HeadingMarks, HeadingStack, NotReadable

_FRONT_MATTER = regex.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", regex.S)
_ATX = regex.compile(r" {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*")
_FENCE = regex.compile(r" {0,3}(```|~~~)")
_SETEXT = regex.compile(r" {0,3}(=+|-+)[ \t]*")
_ADORNMENT = regex.compile(r"([=\-~^`'\"*+#:.!_])\1{2,}[ \t]*")
_LINK = regex.compile(r"\[([^\]]*)\]\([^)]*\)")
FRONT_MATTER_LIMIT = 64 * 1024
"""The most characters of front matter read as metadata: real front matter is a few hundred, and
PyYAML reads 30,000 to 200,000 a second (bench/README.md, *Bad files*)."""
ALIAS_GROWTH_LIMIT = 1_000_000
"""How much YAML aliases may add to front matter, in nodes plus scalar characters.

PyYAML builds an alias as a shared reference, so a "billion laughs" (anchors that list anchors)
costs nothing to load and gigabytes to write out as metadata. The node graph is composed first
and its size with every alias expanded is counted, each node once with memoisation: real front
matter reuses a block a few times (a few kilobytes), while a million is a few megabytes at worst.
"""


class FrontMatterKept(Exception):
    """Front matter that cannot become metadata and stays in the document's text; the message says
    why, `body_start` where the text after it begins (its headings are the document's)."""

    def __init__(self, message: str, body_start: int) -> None:
        super().__init__(message)
        self.body_start = body_start


def split_front_matter(text: str) -> tuple[str, dict[str, object]]:
    """(text without its YAML front matter, the front matter's fields); front matter that is not a
    YAML mapping is left in the text. FrontMatterKept: front matter longer than FRONT_MATTER_LIMIT or
    holding a value that YAML names but cannot construct (a date not in the calendar, `!!int abc`, an
    integer of more digits than Python converts). NotReadable: front matter that aliases expand past
    ALIAS_GROWTH_LIMIT, that contains itself, or that is nested too deeply to read."""
    found = _FRONT_MATTER.match(text)
    if not found:
        return text, {}
    if len(found.group(1)) > FRONT_MATTER_LIMIT:
        raise FrontMatterKept(
            f"front matter of {len(found.group(1)):,} characters kept as text (limit {FRONT_MATTER_LIMIT:,}); "
            "shorten it or move the data to a file of its own",
            found.end(),
        )
    try:
        fields = _load_bounded(found.group(1))
    except (ValueError, OverflowError, yaml.constructor.ConstructorError) as error:
        reason = error.problem if isinstance(error, yaml.MarkedYAMLError) else str(error).split(";")[0]
        raise FrontMatterKept(f"front matter kept as text: {reason}; fix the value or quote it", found.end()) from None
    except yaml.YAMLError:
        return text, {}
    except RecursionError:
        raise NotReadable("front matter nested too deeply to read; flatten it or remove it") from None
    if not isinstance(fields, dict):
        return text, {}
    return text[found.end() :], {str(key): value for key, value in fields.items()}


def _load_bounded(source: str) -> object:
    """The YAML document in `source`, constructed only after `_alias_growth` allows it."""
    loader = yaml.SafeLoader(source)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        growth = _alias_growth(node)
        if growth > ALIAS_GROWTH_LIMIT:
            raise NotReadable(
                f"front matter aliases (*name) expand it by {growth:,} nodes and characters "
                f"(limit {ALIAS_GROWTH_LIMIT:,}); write the values out or remove the aliases"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _alias_growth(root: yaml.Node) -> int:
    """What aliases add to a node graph: its size (nodes plus scalar characters) with each alias
    expanded, less its size with each node counted once."""
    expanded: dict[int, int] = {}
    open_nodes: set[int] = set()
    written = 0

    def size(node: yaml.Node) -> int:
        nonlocal written
        key = id(node)
        if key in expanded:
            return expanded[key]
        if key in open_nodes:
            raise NotReadable("front matter contains itself through an alias (*name); remove the alias")
        open_nodes.add(key)
        if isinstance(node, yaml.ScalarNode):
            own, children = 1 + len(node.value), []
        elif isinstance(node, yaml.SequenceNode):
            own, children = 1, node.value
        else:
            own, children = 1, [part for pair in node.value for part in pair]
        total = own + sum(size(child) for child in children)
        open_nodes.discard(key)
        written += own
        expanded[key] = total
        return total

    return size(root) - written


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
