"""reStructuredText read through docutils: sections as headings, and only what renders as text.

The raw text of a .rst file fills snippets with markup: heading underlines, link targets, roles,
directives. docutils parses it into a tree (no file is ever read from it, nothing is printed: see
SETTINGS), which is read here block by block as html.py reads a page: section titles are headings
(a nested section one level deeper), paragraphs, list items, definitions and fields are blocks,
literal blocks keep their lines, a table is one line per row (cells between " | "), an admonition
is its text after its label ("Note: ..."). Comments, link targets, substitution definitions, images
and a generated table of contents are left out; roles and references are their text
(:func:`foo` is `foo`, `Title <target>` is `Title`).

What docutils cannot place it leaves in a system message holding the source it skipped; that
source is put back as text (`_put_back`): the content of a directive docutils does not know
(Sphinx's) or could not run, read as reST and labelled with the directive ("versionadded 1.2:
..."); a code directive's content as code lines; a title it could not place (an inconsistent
level) as a paragraph. A directive that names files, raw output or index entries
(`DROPPED_DIRECTIVES`), or that has no content (`.. autofunction:: name`), is left out. Where
docutils fails outright the file is read as raw text (text_files.read_rst), and the build says so.
"""

from __future__ import annotations

import copy
import functools
import textwrap

import regex
from docutils import nodes
from docutils.frontend import Values, get_default_settings
from docutils.parsers.rst import Parser
from docutils.transforms import references
from docutils.utils import new_document

from .document import INDEXED, Document, FileInput, SkippedFile, whole_file
from .outline import BlockText, NotReadable
from .text_files import read_rst

SETTINGS = {
    "report_level": 5,  # no message is printed: each stays in the tree as a system_message
    "halt_level": 5,  # and none is raised
    "warning_stream": False,
    "file_insertion_enabled": False,  # a document never reads another file: include, csv-table :file:/:url:
    "raw_enabled": False,
    "syntax_highlight": "none",  # code stays plain text; Pygments' tokens add nothing here
}
"""Settings over docutils' defaults. No configuration file is read: the tree is built here, not by
a docutils Publisher (which would also print and exit on a failure)."""
TRANSFORMS = (references.Substitutions, references.Footnotes)
"""The transforms applied: |substitutions| replaced, [#]_ footnotes numbered. Not the others, nor
the directives' own: each `.. contents::` (left out here) would list the whole document again."""
MAX_PARSED_CHARS = 1_000_000
"""The longest text docutils parses; a longer one is read as raw text. docutils reads a megabyte of
real documents (AWS CLI pages, PyPI READMEs) in 0.4 to 3 s, but one dense with markup (nested lists,
directives, tables) in 25 to 35 s, and its time grows faster than the text (the raw reading: 0.1 s)."""
LINE_LENGTH_LIMIT = 10_000
"""docutils' own limit (`line_length_limit`): it parses a document with a longer line as nothing
but an error, so such a file is read as raw text."""
TAB_WIDTH = 8
DROPPED_DIRECTIVES = frozenset({"include", "literalinclude", "raw", "toctree", "index"})
"""Directives whose content is never text: files or raw output to include, names of files or index entries."""
CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode", "doctest", "testcode", "testoutput"})
"""Directives whose content is code, kept line by line where docutils could not run them (Sphinx's
options such as :linenos: or :emphasize-lines:)."""
ERROR = 3
"""The level of the system messages about source docutils left out; a warning's (a title's short
underline) is about source it read."""
PUT_BACK = "put-back"
"""The class of the containers a batch of directives' content is parsed in (`_put_back`)."""
DIRECTIVE = regex.compile(r"\.\.[ \t]+([\w:.+-]+)::(.*)")
OPTION = regex.compile(r"[ \t]*:[^:\s][^:]*:(?:[ \t].*)?")
MARKUP_LINE = regex.compile(r"[^\w\s]+")
"""A line of punctuation only: a title's adornment, a table's border."""
ROLE = regex.compile(r"(?s):[\w.:+-]+:`(.*)`|`(.*)`:[\w.:+-]+:")
EXPLICIT_TITLE = regex.compile(r"(?s)(.*?)\s*<[^<>]*>")
SUBSTITUTION = regex.compile(r"\|(\S(?:.*\S)?)\|")
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
        reason = str(error) if isinstance(error, NotReadable) else type(error).__name__
        skipped.append(
            SkippedFile(input.source, f"{INDEXED}as raw text: docutils cannot read it ({reason})", input.file)
        )
        return read_rst(input, skipped)
    return whole_file(input, title, blocks.text, headings=blocks.headings)


def rst_text(text: str) -> tuple[str, BlockText]:
    """(title: the first section's, text with heading marks). NotReadable for a text too long to
    parse or a line docutils refuses."""
    if len(text) > MAX_PARSED_CHARS:
        raise NotReadable(f"longer than {MAX_PARSED_CHARS:,} characters")
    if any(len(line.expandtabs(TAB_WIDTH)) > LINE_LENGTH_LIMIT for line in text.split("\n")):
        raise NotReadable(f"a line is longer than {LINE_LENGTH_LIMIT:,} characters")
    document = _parsed(text)
    messages = list(document.findall(nodes.system_message))
    while messages:
        messages = _put_back(messages)
    blocks = BlockText()
    _TreeReader(blocks).body(document, 0)
    return (blocks.headings[0][1][-1] if blocks.headings else ""), blocks


def _parsed(text: str) -> nodes.document:
    document = new_document("<rst>", copy.copy(_settings()))
    Parser().parse(text, document)
    for transform in TRANSFORMS:
        transform(document).apply()
    return document


@functools.cache
def _settings() -> Values:
    settings = get_default_settings(Parser)
    vars(settings).update(SETTINGS)
    return settings


def _put_back(messages: list[nodes.system_message]) -> list[nodes.system_message]:
    """Replace each system message by the text of the source it holds (see the module's
    docstring), or by nothing. The content of the directives among them is parsed in one document
    (a parse costs far more than its text: a file may hold thousands); the messages of that
    content (a directive within a directive) are returned, for the next round."""
    replaced: dict[int, list[nodes.Node]] = {}
    """What each message (by id) is replaced by."""
    directives: list[tuple[nodes.system_message, str, str]] = []
    for message in messages:
        source = next((child.astext() for child in message.children if isinstance(child, nodes.literal_block)), "")
        name, label, content = _directive(source)
        replaced[id(message)] = []
        if source and not source.startswith("..") and message["level"] >= ERROR:  # a warning's source is in the tree
            lines = [" ".join(line.split()) for line in source.split("\n")]
            text = "\n".join(line for line in lines if line and not MARKUP_LINE.fullmatch(line))
            replaced[id(message)] = [nodes.literal_block(text, text)]  # kept line by line, as written
        elif name in CODE_DIRECTIVES and content:
            replaced[id(message)] = [nodes.literal_block(content, content)]
        elif name and name not in DROPPED_DIRECTIVES and content:
            directives.append((message, label, content))
    nested = []
    if directives:
        batch = _parsed(
            "\n\n".join(
                f".. container:: {PUT_BACK}-{at}\n\n{textwrap.indent(content, '   ')}"
                for at, (_, _, content) in enumerate(directives)
            )
        )
        containers = {tuple(container["classes"]): container for container in batch.findall(nodes.container)}
        for at, (message, label, _) in enumerate(directives):
            container = containers.get((f"{PUT_BACK}-{at}",))
            if container is not None:
                box = nodes.admonition("", nodes.title(label, label), *container.children)
                replaced[id(message)] = [box]
                nested.extend(box.findall(nodes.system_message))
    for parent in {id(message.parent): message.parent for message in messages}.values():
        _replace_children(parent, replaced)
    return nested


def _replace_children(parent: nodes.Element, replaced: dict[int, list[nodes.Node]]) -> None:
    """The children of `parent`, each in `replaced` (by id) replaced, in one pass (docutils'
    replace_self looks each child up: time quadratic in a section's children)."""
    children: list[nodes.Node] = []
    for child in parent.children:
        for node in replaced.get(id(child), [child]):
            if node is not child:
                parent.setup_child(node)
            children.append(node)
    parent.children = children


def _directive(source: str) -> tuple[str, str, str]:
    """(name, label: the name and arguments, content) of the directive written in `source`: its name
    without a domain (py:function is function), its content the lines after its first, options left
    out, dedented. Empty strings where `source` is no directive."""
    found = DIRECTIVE.match(source)
    if not found:
        return "", "", ""
    name = found.group(1).lower().rpartition(":")[2]
    lines = source.split("\n")[1:]
    while lines and OPTION.fullmatch(lines[0]):
        lines.pop(0)
    return name, " ".join(f"{name} {found.group(2)}".split()), textwrap.dedent("\n".join(lines)).strip("\n")


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
            self.add(" ".join(node.astext().split()), group)
        elif isinstance(node, LEFT_OUT) or "contents" in node.get("classes", ()):
            pass
        elif isinstance(node, nodes.section):
            for child in node.children:
                if isinstance(child, nodes.title):
                    self.text.heading(depth + 1, inline_text(child))
                else:
                    self.block(child, depth + 1)
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
        """`body`'s blocks, the first beginning with `label` (after the label of a box it opens)."""
        self.marker += label
        for part in body:
            self.block(part, depth, group)
        self.marker = ""

    def list(self, node: nodes.Element, depth: int, group: object, indent: str) -> None:
        """A list's items as lines of one paragraph, a nested list's indented under its item."""
        for item in node.children:
            self.marker += indent + "- "
            for part in item.children:
                if isinstance(part, LISTS):
                    self.list(part, depth, group, indent + "  ")
                else:
                    self.block(part, depth, group)
            self.marker = ""


def inline_text(node: nodes.Node) -> str:
    """A node's text on one line: roles as their text, footnote references as [n], raw markup left out."""
    return " ".join(_inline(node).split())


def _inline(node: nodes.Node) -> str:
    if isinstance(node, nodes.Text):
        return node.astext()
    if isinstance(node, (nodes.raw, nodes.image)):  # a custom role's raw output, an image substituted in text
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
