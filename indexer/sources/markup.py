"""AsciiDoc (.adoc) and Org (.org) files, their headings as sections, read by their line syntax.

Neither has a maintained pure-Python parser worth a dependency, and a heading is a line of its
own in both, so the lines are read here: the text is the file's own, less the lines that are
markup only, and each heading is a block that marks where its section begins.

AsciiDoc: `= Title`, `== Section`, ... (the level is the count of `=`). Delimited blocks (a line of
four or more `-`, `.`, `=`, `*`, `_` or `+`, a `--` open block, a ``` fence, a `|===` table) hold
no headings; a listing, literal, passthrough or table block keeps its lines as they are, and a
`////` comment block is left out. Left out too: attribute entries (`:toc:`), line comments (`//`),
block anchors and attribute lists (`[[id]]`, `[#id]`, `[source,python]`) and block macros
(`include::file[]`, `image::file[]`: never read); a block title (`.Title`) is kept as its text.

Org: `* Heading`, `** Sub`, ... (the level is the count of stars; a TODO or DONE keyword, a
priority and tags are not part of the title), `#+TITLE:` the document's title. `#+BEGIN_...`
blocks hold no headings; a source, example or export block keeps its lines (`,*` unescaped), a
comment block is left out. Left out too: other `#+` lines (a `#+CAPTION:` is kept as its text),
comment lines (`# ...`) and drawers (`:PROPERTIES:` ... `:END:`, closed before the next heading).

A block or drawer that is never closed is not one: the lines after its first are read as any others.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import regex

from .outline import BlockText

ADOC_HEADING = regex.compile(r"(={1,6})[ \t]+(\S.*?)(?:[ \t]+=+)?[ \t]*")
ADOC_DELIMITER = regex.compile(r"(?:-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--|```.*|[|,:!]={3,})[ \t]*")
ADOC_VERBATIM = frozenset("-.+/`|,:!")
"""First characters of the delimiters of blocks whose lines are kept as they are (`/`: left out)."""
ADOC_MARKUP = regex.compile(
    r":!?\w[\w-]*!?:(?:[ \t].*)?"  # attribute entry
    r"|//(?!//).*"  # line comment
    r"|\[.*\]"  # anchor [[id]], [#id]; attribute list [source,python], [NOTE]
    r"|[a-z][\w-]*::\S*\[.*\]"  # block macro: include::, image::, toc::, ifdef::
)
ADOC_BLOCK_TITLE = regex.compile(r"\.([^\s.].*)")
ORG_HEADING = regex.compile(r"(\*+)[ \t]+(?:(?:TODO|DONE)[ \t]+)?(?:\[#\w\][ \t]+)?(.*?)(?:[ \t]+:[\w@#%:]+:)?[ \t]*")
ORG_BEGIN = regex.compile(r"(?i)[ \t]*#\+begin_(\w+).*")
ORG_END = regex.compile(r"(?i)[ \t]*#\+(end_\w+)[ \t]*")
ORG_KEYWORD = regex.compile(r"[ \t]*#\+(\w[\w-]*):[ \t]*(.*)")
ORG_MARKUP = regex.compile(r"[ \t]*#(?:\+.*|[ \t].*)?")
"""A keyword or block line, a comment line."""
ORG_DRAWER = regex.compile(r"[ \t]*:[\w-]+:[ \t]*")
ORG_DRAWER_END = regex.compile(r"(?i)[ \t]*:end:[ \t]*")
ORG_ESCAPE = regex.compile(r"\A([ \t]*),(?=\*|#\+)")
ORG_VERBATIM = frozenset({"src", "example", "export"})
ORG_COMMENT = "comment"
END = 1 << 62
"""After every line."""


def asciidoc_text(text: str) -> tuple[str, BlockText]:
    """(title: the first heading, normally `= Title`; the text with heading marks)."""
    lines = text.split("\n")
    closers = _Closers(lines, _adoc_delimiter)
    out = _Blocks()
    stack: list[str] = []
    """The delimiters of the blocks open, innermost last."""
    for at, line in enumerate(lines):
        delimiter = _adoc_delimiter(line)
        if stack and delimiter == _adoc_closer(stack[-1]):
            out.close(keep=not stack.pop().startswith("/"))
        elif stack and stack[-1][0] in ADOC_VERBATIM:
            out.verbatim(line)
        elif delimiter:
            if closers.closed(at, _adoc_closer(delimiter)):
                stack.append(delimiter)
                out.open(verbatim=delimiter[0] in ADOC_VERBATIM)
        elif not stack and (heading := ADOC_HEADING.fullmatch(line)):
            out.heading(len(heading.group(1)), heading.group(2))
        elif not ADOC_MARKUP.fullmatch(line):
            title = None if out.paragraph else ADOC_BLOCK_TITLE.fullmatch(line)
            out.line(title.group(1) if title else line)
    return out.finish()


def _adoc_delimiter(line: str) -> str | None:
    return line.rstrip() if ADOC_DELIMITER.fullmatch(line) else None


def _adoc_closer(opener: str) -> str:
    """The line that closes a block: its opener, or a bare fence for ```python."""
    return "```" if opener.startswith("```") else opener


def org_text(text: str) -> tuple[str, BlockText]:
    """(title: `#+TITLE:`, else the first heading; the text with heading marks)."""
    lines = text.split("\n")
    closers = _Closers(lines, _org_closer)
    headings = [at for at, line in enumerate(lines) if ORG_HEADING.fullmatch(line)]
    out = _Blocks()
    title = ""
    block: str | None = None
    """The name of the #+BEGIN_ block open, lowercase."""
    in_drawer = False
    for at, line in enumerate(lines):
        begin = ORG_BEGIN.fullmatch(line)
        if block is not None:
            if _org_closer(line) == f"end_{block}":
                block = None
                out.close(keep=True)
            elif block in ORG_VERBATIM:
                out.verbatim(ORG_ESCAPE.sub(r"\1", line))
            elif block != ORG_COMMENT and not ORG_MARKUP.fullmatch(line):
                out.line(line)
        elif in_drawer:
            in_drawer = not ORG_DRAWER_END.fullmatch(line)
        elif begin:
            if closers.closed(at, f"end_{begin.group(1).lower()}"):
                block = begin.group(1).lower()
                out.open(verbatim=block in ORG_VERBATIM)
        elif ORG_DRAWER.fullmatch(line) and closers.closed(at, "end", before=_next(headings, at)):
            in_drawer = True
        elif heading := ORG_HEADING.fullmatch(line):
            out.heading(len(heading.group(1)), heading.group(2))
        elif keyword := ORG_KEYWORD.fullmatch(line):
            name = keyword.group(1).lower()
            title = title or (keyword.group(2) if name == "title" else "")
            if name == "caption":
                out.line(keyword.group(2))
        elif not ORG_MARKUP.fullmatch(line):
            out.line(line)
    first_heading, blocks = out.finish()
    return " ".join(title.split()) or first_heading, blocks


def _org_closer(line: str) -> str | None:
    """What an Org line closes: "end_src" for #+END_SRC, "end" for a drawer's :END:."""
    if ORG_DRAWER_END.fullmatch(line):
        return "end"
    found = ORG_END.fullmatch(line)
    return found.group(1).lower() if found else None


def _next(indexes: list[int], at: int) -> int:
    """The first of the sorted `indexes` after `at` (END where none is)."""
    found = bisect.bisect_right(indexes, at)
    return indexes[found] if found < len(indexes) else END


class _Closers:
    """Where the lines of each kind that close a block lie, to tell a block from a stray opening
    line without reading ahead from each."""

    def __init__(self, lines: list[str], closes: Callable[[str], str | None]) -> None:
        self.lines: dict[str, list[int]] = {}
        for at, line in enumerate(lines):
            kind = closes(line)
            if kind is not None:
                self.lines.setdefault(kind, []).append(at)

    def closed(self, at: int, kind: str, before: int = END) -> bool:
        """Whether a line closing `kind` follows line `at`, before line `before`."""
        return _next(self.lines.get(kind, []), at) < before


class _Blocks:
    """A document's text as BlockText blocks: paragraphs (lines between blank lines), headings, and
    verbatim blocks (their lines, blank ones too, as they are)."""

    def __init__(self) -> None:
        self.text = BlockText()
        self.paragraph: list[str] = []
        self.verbatim_lines: list[str] | None = None
        """The lines of the verbatim block open, if one is."""
        self.first_heading = ""

    def line(self, line: str) -> None:
        if line.strip():
            self.paragraph.append(line)
        else:
            self.flush()

    def open(self, verbatim: bool) -> None:
        """A block begins: its lines are a paragraph's (`verbatim`: kept as they are)."""
        self.flush()
        self.verbatim_lines = [] if verbatim else None

    def verbatim(self, line: str) -> None:
        if self.verbatim_lines is not None:
            self.verbatim_lines.append(line)

    def close(self, keep: bool) -> None:
        """A block ends; a verbatim one is added as a block (`keep`) or left out."""
        self.flush()
        if keep and self.verbatim_lines:
            self.text.add("\n".join(self.verbatim_lines))
        self.verbatim_lines = None

    def flush(self) -> None:
        self.text.add("\n".join(self.paragraph))
        self.paragraph.clear()

    def heading(self, level: int, title: str) -> None:
        self.flush()
        self.first_heading = self.first_heading or " ".join(title.split())
        self.text.heading(level, title)

    def finish(self) -> tuple[str, BlockText]:
        self.close(keep=True)
        return self.first_heading, self.text
