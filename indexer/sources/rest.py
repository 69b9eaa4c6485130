"""reStructuredText read through docutils: sections as headings, and only what renders as text.

The raw text of a .rst file fills snippets with markup: heading underlines, link targets, roles,
directives. docutils parses it into a tree (no file is ever read from it, nothing is printed: see
SETTINGS), which is read here block by block as html.py reads a page: section titles are headings
(a nested section one level deeper), paragraphs, list items, definitions and fields are blocks,
literal blocks keep their lines, a table is one line per row (cells between " | "), an admonition
is its text after its label ("Note: ..."). Comments, link targets, substitution definitions, images
and a generated table of contents are left out; roles and references are their text
(:func:`foo` is `foo`, `Title <target>` is `Title`).

What docutils cannot place it reports in a system message holding the source it skipped: the
content of a directive it does not know (Sphinx's) or could not run is read as reST in its place,
a code directive's as code lines, and a title it could not place (an inconsistent level) as a
paragraph; a directive that names files or raw output (`DROPPED_DIRECTIVES`) is left out. Where
docutils fails outright the file is read as raw text (text_files.read_rst), and the build says so.
"""

from __future__ import annotations

import textwrap

import regex
from docutils import nodes
from docutils.core import publish_doctree

from .document import INDEXED, Document, FileInput, SkippedFile, whole_file
from .outline import BlockText, NotReadable
from .text_files import read_rst

SETTINGS = {
    "report_level": 5,  # no message is printed: each stays in the tree as a system_message
    "halt_level": 5,  # and none is raised
    "warning_stream": False,
    "traceback": True,  # a failure raises (to fall back to raw text) rather than print and exit
    "_disable_config": True,  # no docutils.conf of the machine, the user or the working folder applies
    "file_insertion_enabled": False,  # a document never reads another file: include, csv-table :file:/:url:
    "raw_enabled": False,
    "doctitle_xform": False,  # the title stays the first section's, at the top of the heading path
    "docinfo_xform": False,
    "syntax_highlight": "none",  # code stays plain text; Pygments' tokens add nothing here
}
LINE_LENGTH_LIMIT = 10_000
"""docutils' own limit (`line_length_limit`): a document with a longer line is parsed as nothing
but an error, so it is read as raw text."""
TAB_WIDTH = 8
DROPPED_DIRECTIVES = frozenset({"include", "literalinclude", "raw", "toctree", "index"})
"""Directives whose content is never text here: files or raw output to include, names of files or
index entries."""
CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode", "doctest", "testcode", "testoutput"})
"""Directives whose content is code, kept line by line where docutils could not run them (Sphinx's
options such as :linenos: or :emphasize-lines:)."""
ROLE = regex.compile(r"(?s):[\w.:+-]+:`(.*)`|`(.*)`:[\w.:+-]+:")
EXPLICIT_TITLE = regex.compile(r"(?s)(.*?)\s*<[^<>]*>")
SUBSTITUTION = regex.compile(r"\|(\S(?:.*\S)?)\|")
DIRECTIVE = regex.compile(r"\.\.[ \t]+([\w:.+-]+)::(.*)")
OPTION = regex.compile(r"[ \t]*:[^:\s][^:]*:(?:[ \t].*)?")
MARKUP_LINE = regex.compile(r"[^\w\s]+")
"""A line of punctuation only: a title's adornment, a table's border."""
LEFT_OUT = (
    nodes.comment,
    nodes.target,
    nodes.substitution_definition,
    nodes.pending,
    nodes.raw,
    nodes.image,
    nodes.transition,
    nodes.colspec,
    nodes.label,
)
LISTS = (nodes.bullet_list, nodes.enumerated_list)
GROUPS = (nodes.table, nodes.field_list, nodes.option_list)
"""Elements whose parts are lines of one paragraph: a table's rows, a field list's fields."""


def read_restructuredtext(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
    """The file's document as docutils reads it; the raw text where docutils cannot."""
    text = input.text()
    try:
        title, blocks = rst_text(text)
    except MemoryError:
        raise
    except Exception as error:  # docutils raises many types on odd input (RecursionError on deep nesting)
        skipped.append(
            SkippedFile(input.source, f"{INDEXED}as raw text: docutils cannot read it ({_reason(error)})", input.file)
        )
        return read_rst(input, skipped)
    return whole_file(input, title, blocks.text, headings=blocks.headings)


def rst_text(text: str) -> tuple[str, BlockText]:
    """(title: the first section's, text with heading marks). NotReadable for a line docutils refuses."""
    if any(len(line.expandtabs(TAB_WIDTH)) > LINE_LENGTH_LIMIT for line in text.split("\n")):
        raise NotReadable(f"a line is longer than {LINE_LENGTH_LIMIT:,} characters")
    blocks = BlockText()
    _TreeReader(blocks).body(_doctree(text), 0)
    return (blocks.headings[0][1][-1] if blocks.headings else ""), blocks


def _doctree(text: str) -> nodes.document:
    return publish_doctree(text, settings_overrides=SETTINGS)


def _reason(error: Exception) -> str:
    return str(error) if isinstance(error, NotReadable) else type(error).__name__


class _TreeReader:
    """Adds the blocks of a docutils tree to a BlockText, in document order."""

    def __init__(self, text: BlockText) -> None:
        self.text = text
        self.marker = ""
        """What the next block begins with: a list item's "- ", an admonition's "Note: "."""

    def add(self, block: str, group: object = None) -> None:
        if block.strip():
            block, self.marker = self.marker + block, ""
            self.text.add(block, group)

    def body(self, node: nodes.Element, depth: int, group: object = None) -> None:
        for child in node.children:
            self.block(child, depth, group)

    def block(self, node: nodes.Node, depth: int, group: object = None) -> None:
        """One element of a body; `depth`: how many sections it lies in."""
        if isinstance(node, nodes.Text):
            self.add(_collapsed(node.astext()), group)
        elif isinstance(node, LEFT_OUT) or "contents" in node.get("classes", ()):
            pass
        elif isinstance(node, nodes.section):
            for child in node.children:
                if isinstance(child, nodes.title):
                    self.text.heading(depth + 1, inline_text(child))
                else:
                    self.block(child, depth + 1)
        elif isinstance(node, nodes.system_message):
            self.salvage(node, depth)
        elif isinstance(node, (nodes.literal_block, nodes.doctest_block, nodes.math_block)):
            self.add(node.astext())
        elif isinstance(node, nodes.line_block):
            self.add("\n".join(inline_text(line) for line in node.findall(nodes.line)))
        elif isinstance(node, LISTS):
            self.list(node, depth, group or node, "")
        elif isinstance(node, nodes.definition_list_item):
            terms = [part for part in node.children if not isinstance(part, nodes.definition)]
            self.add(" : ".join(inline_text(term) for term in terms), node)
            for part in node.children:
                if isinstance(part, nodes.definition):
                    self.body(part, depth, node)
        elif isinstance(node, nodes.field):
            name, body = node.children
            self.labelled(f"{inline_text(name)}: ", body.children, depth, group)
        elif isinstance(node, nodes.option_list_item):
            options, description = node.children
            self.labelled(f"{options.astext()}  ", description.children, depth, group)  # "-o FILE, --out=FILE"
        elif isinstance(node, (nodes.footnote, nodes.citation)):
            labels = [part.astext() for part in node.children if isinstance(part, nodes.label)]
            self.labelled(f"[{labels[0]}] " if labels else "", node.children, depth)
        elif isinstance(node, nodes.Admonition):
            titled = bool(node.children) and isinstance(node.children[0], nodes.title)
            label = inline_text(node.children[0]) if titled else node.tagname.capitalize()
            self.labelled(f"{label}: ", node.children[int(titled) :], depth)
        elif isinstance(node, nodes.row):
            self.add(" | ".join(inline_text(entry) for entry in node.children), group)
        elif isinstance(node, GROUPS):
            self.body(node, depth, node)
        elif isinstance(node, nodes.TextElement):
            self.add(inline_text(node), group)
        elif isinstance(node, nodes.Element):
            self.body(node, depth, group)

    def labelled(self, label: str, body: list[nodes.Node], depth: int, group: object = None) -> None:
        """`body`'s blocks, the first beginning with `label`."""
        self.marker = label
        for part in body:
            self.block(part, depth, group)
        self.marker = ""

    def list(self, node: nodes.Element, depth: int, group: object, indent: str) -> None:
        """A list's items as lines of one paragraph, a nested list's indented under its item."""
        for item in node.children:
            self.marker = indent + "- "
            for part in item.children:
                if isinstance(part, LISTS):
                    self.list(part, depth, group, indent + "  ")
                else:
                    self.block(part, depth, group)
            self.marker = ""

    def salvage(self, message: nodes.system_message, depth: int) -> None:
        """The source a system message holds, where it is text (see the module's docstring)."""
        source = next((child.astext() for child in message.children if isinstance(child, nodes.literal_block)), "")
        if not source.startswith(".."):
            lines = [_collapsed(line) for line in source.split("\n")]
            self.add("\n".join(line for line in lines if line and not MARKUP_LINE.fullmatch(line)))
            return
        directive = DIRECTIVE.match(source)
        name = directive.group(1).lower().rpartition(":")[2] if directive else ""
        content = _directive_content(source)
        if not name or name in DROPPED_DIRECTIVES or not content.strip():
            return
        if name in CODE_DIRECTIVES:
            self.add(content)
        else:
            self.labelled(f"{_collapsed(f'{name} {directive.group(2)}')}: ", _doctree(content).children, depth)


def _directive_content(source: str) -> str:
    """A directive's content: the lines after its first, its options left out, dedented."""
    lines = source.split("\n")[1:]
    while lines and OPTION.fullmatch(lines[0]):
        lines.pop(0)
    return textwrap.dedent("\n".join(lines)).strip("\n")


def inline_text(node: nodes.Node) -> str:
    """A node's text on one line: roles as their text, footnote references as [n], raw markup left out."""
    return _collapsed(_inline(node))


def _inline(node: nodes.Node) -> str:
    if isinstance(node, nodes.Text):
        return node.astext()
    if isinstance(node, (nodes.raw, nodes.image, nodes.system_message, nodes.comment, nodes.pending)):
        return ""
    if isinstance(node, nodes.problematic):
        return _unmarked(node.astext())
    if isinstance(node, (nodes.footnote_reference, nodes.citation_reference)):
        return f"[{node.astext()}]"
    separator = "" if isinstance(node, (nodes.TextElement, nodes.Inline)) else " "
    return separator.join(_inline(child) for child in node.children)


def _unmarked(source: str) -> str:
    """Text docutils left as written: a role it does not know (Sphinx's :func:`~mod.name`,
    :ref:`Title <label>`) as the text Sphinx shows, an undefined substitution as its name."""
    role = ROLE.fullmatch(source)
    if role:
        content = role.group(1) if role.group(1) is not None else role.group(2)
        explicit = EXPLICIT_TITLE.fullmatch(content)
        if explicit and explicit.group(1):
            return explicit.group(1)
        if content.startswith("~"):
            return content[1:].rpartition(".")[2]
        return content.removeprefix("!")
    substitution = SUBSTITUTION.fullmatch(source)
    return substitution.group(1) if substitution else source


def _collapsed(text: str) -> str:
    return " ".join(text.split())
