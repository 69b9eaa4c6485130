"""The main content of an HTML page, as text with its headings marked.

What is never content is cut out by its markup first: <nav>, <aside>, <footer>, role="navigation",
buttons ("copy"), a page <header> outside an <article>, DocBook's navigation header and footer and
its tables of contents, and heading permalink marks (an anchor "#" or "¶" inside a heading). Then
a page that names its main content is read from that element as it stands: <main> or
role="main" (Sphinx, Javadoc and most documentation themes), a lone <article>, or the body of a
DocBook page (a body holding a DocBook division: chapter, sect1, refentry...). In other pages
trafilatura finds the main content by its markup and link density (it drops menus, sidebars and
footers); its own text glues, moves or drops inline text and headings, so the page's body is read
here as it stands and only the blocks whose text trafilatura kept are kept (`_KeptText`), with the
headings above them. A page too short for trafilatura to judge is read whole.

Headings (h1-h6) become blocks that mark sections; paragraphs, list items and table rows are
blocks with their whitespace collapsed as a browser collapses it (inline elements keep the spaces
the source has around them, and no more); code blocks keep their lines. An element holding blocks
(a list item or table cell with paragraphs, a DocBook note) is read block by block.
"""

from __future__ import annotations

import copy

import lxml.html
import regex
import trafilatura
from lxml import etree

from .outline import BlockText, NotReadable

NEVER_CONTENT = (
    "//nav | //aside | //footer | //button | //script | //style | //noscript | //template"
    " | //*[@role='navigation'] | //*[@hidden] | //header[not(ancestor::article)]"
    " | //div[@class='navheader' or @class='navfooter' or @class='toc' or starts-with(@class, 'list-of-')]"
)
PERMALINK_LABELS = frozenset({"", "#", "¶", "§", "🔗", "link"})
MAIN_CONTENT = "//main | //*[@role='main']"
DOCBOOK_DIVISIONS = frozenset(
    "appendix article bibliography book chapter colophon dedication glossary index legalnotice part preface"
    " reference refentry sect1 section set".split()
)
"""Classes of the <div> that DocBook's HTML gives a page's top division."""
HEADING_TAGS = {f"h{level}": level for level in range(1, 7)}
BOX_CLASSES = frozenset({"note", "tip", "caution", "warning", "important", "sidebar"})
"""Classes of a <div> whose heading titles a box (DocBook's <h3 class="title">Note</h3>), not a
section: it is read as a paragraph, so the text after the box is not filed under "Note"."""
BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog div dl dt fieldset figcaption figure"
    " footer form h1 h2 h3 h4 h5 h6 header hgroup hr legend li main menu nav ol p pre section summary table tbody"
    " td tfoot th thead tr ul".split()
)
"""Elements a browser lays out as blocks: their text never runs into the text around them."""
ITEM_TAGS = frozenset({"li", "dt", "dd"})
CELL_TAGS = frozenset({"td", "th"})
_SPACES = regex.compile(r"\s+")
_XML_DECLARATION = regex.compile(r"\A\s*<\?xml[^>]*\?>")
"""XHTML's declaration: lxml refuses it in text already decoded."""
BREAK = "\x00"
"""Stands for a line break element while whitespace is collapsed."""
MAX_DEPTH = 500
"""Elements nested deeper are not read: the page is skipped, saying so. libxml2 is told to parse
large trees (`huge_tree`), else it cuts a page at 256 levels or at a 10 MB text node and the rest
is lost without a word."""
MAX_TEXT_NODE_CHARS = 5_000_000
"""The longest text of one element read: trafilatura's own parser stops at libxml2's 10,000,000
characters per text (which its output may join), so a page with a longer one (a 10 MB <h1>) is
skipped, saying so."""
MAX_PAGE_CHARS = 10_000_000
"""The longest page read: trafilatura takes about 10 s a megabyte of a page's text, and a parsed
tree several times its markup (bench/README.md, *Bad files*); a long real page is a few megabytes."""
MAX_ELEMENTS = 250_000
"""The most elements a page may hold: a long article holds a few tens of thousands, and every one
costs trafilatura time and memory."""
_HTML_PARSER = lxml.html.HTMLParser(huge_tree=True)
_XML_PARSER = etree.XMLParser(huge_tree=True)


def html_to_text(html: str) -> tuple[str, BlockText]:
    """(title, main content) of an HTML page: title from <title>, else the first <h1>."""
    if len(html) > MAX_PAGE_CHARS:
        raise NotReadable(
            f"the page holds {len(html):,} characters (limit {MAX_PAGE_CHARS:,}); split the page or exclude it"
        )
    try:
        page = lxml.html.document_fromstring(_XML_DECLARATION.sub("", html, count=1), parser=_HTML_PARSER)
    except etree.ParserError:  # nothing but whitespace or comments
        return "", BlockText()
    _check_shape(page)
    title = page.findtext(".//title") or ""
    if not title.strip():
        first = page.find(".//h1")
        title = first.text_content() if first is not None else ""
    title = " ".join(title.split())
    for element in page.xpath(NEVER_CONTENT):
        _drop(element)
    for anchor in page.xpath("//h1//a | //h2//a | //h3//a | //h4//a | //h5//a | //h6//a"):
        if anchor.text_content().strip().lower() in PERMALINK_LABELS:
            _drop(anchor)
    text = BlockText()
    content = _named_main_content(page)
    if content is not None:
        _BlockReader(text, content).read(content)
        return title, text
    body = page.find("body")
    if body is None:
        return title, text
    extracted = trafilatura.extract(
        copy.deepcopy(page), output_format="xml", include_tables=True, include_comments=False, favor_recall=True
    )  # it cleans the tree it is given
    main = etree.fromstring(extracted.encode(), _XML_PARSER).find("main") if extracted else None
    _BlockReader(text, body, _KeptText("".join(main.itertext())) if main is not None else None).read(body)
    return title, text


def _named_main_content(page: etree._Element) -> etree._Element | None:
    """The element the page's markup names as its main content (see the module's docstring), if any."""
    for main in page.xpath(MAIN_CONTENT):
        if main.text_content().strip():
            return main
    articles = page.xpath("//article")
    if len(articles) == 1 and articles[0].text_content().strip():
        return articles[0]
    body = page.find("body")
    if body is not None and any(
        child.tag == "div" and DOCBOOK_DIVISIONS.intersection(child.get("class", "").split()) for child in body
    ):
        return body
    return None


def _check_shape(page: etree._Element) -> None:
    """NotReadable where the page holds more than MAX_ELEMENTS elements, elements nest deeper than
    MAX_DEPTH or one text is longer than MAX_TEXT_NODE_CHARS (all found without recursion)."""
    depth = elements = 0
    for event, element in etree.iterwalk(page, events=("start", "end")):
        depth += 1 if event == "start" else -1
        elements += event == "start"
        if elements > MAX_ELEMENTS:
            raise NotReadable(f"the page holds more than {MAX_ELEMENTS:,} elements; split the page or exclude it")
        if depth > MAX_DEPTH:
            raise NotReadable(f"elements nested more than {MAX_DEPTH} deep; flatten the page or exclude it")
        text = element.text if event == "start" else element.tail
        if text and len(text) > MAX_TEXT_NODE_CHARS:
            raise NotReadable(
                f"one element holds {len(text):,} characters of text, more than the {MAX_TEXT_NODE_CHARS:,} "
                "an HTML page may; split the page or exclude it"
            )


def _drop(element: etree._Element) -> None:
    """Remove an element but keep the text that follows it."""
    parent = element.getparent()
    if parent is not None:
        element.drop_tree()


class _BlockReader:
    """Adds the blocks under an element to a BlockText, in document order."""

    def __init__(self, text: BlockText, content: etree._Element, kept: _KeptText | None = None) -> None:
        self.text = text
        self.kept = kept
        """What trafilatura kept of the page: the blocks it did not keep are left out, and the
        headings with nothing kept under them. None: every block is kept."""
        self.holders = _block_holders(content)
        self.marker = ""
        """A list item's "- ", waiting for the item's first block."""
        self.pending: list[tuple[int, str]] = []
        """(level, title) of the headings trafilatura did not keep, not yet added: they wait for a
        block kept under them."""

    def add(self, block: str, group: object = None) -> None:
        if not block.strip() or (self.kept is not None and not self.kept.holds(block)):
            return
        for level, title in self.pending:
            self.text.heading(level, title)
        self.pending.clear()
        block, self.marker = self.marker + block, ""
        self.text.add(block, group)

    def heading(self, level: int, title: str) -> None:
        # a heading of the same or a higher level closes the sections still waiting
        self.pending = [(above, name) for above, name in self.pending if above < level] + [(level, title)]
        if self.kept is None or self.kept.holds(title):
            for waiting, name in self.pending:
                self.text.heading(waiting, name)
            self.pending.clear()

    def read(self, element: etree._Element) -> None:
        """The blocks under `element`; inline content between blocks is a paragraph of its own."""
        loose = [element.text or ""]

        def flush() -> None:
            self.add(_inline("".join(loose)))
            loose.clear()

        for child in element:
            tag = child.tag if isinstance(child.tag, str) else ""
            level = HEADING_TAGS.get(tag) if not _titles_a_box(child) else None
            if not tag:
                pass
            elif level:
                flush()
                self.heading(level, _paragraph(child))
            elif tag == "pre":
                flush()
                self.add("".join(_flatten(child)).replace(BREAK, "\n"))
            elif tag in ITEM_TAGS:
                flush()
                self.item(child, element)
            elif tag == "tr":
                flush()
                self.row(child)
            elif child in self.holders:
                flush()
                self.read(child)
            elif tag in BLOCK_TAGS:
                flush()
                self.add(_paragraph(child))
            else:
                loose.extend([BREAK] if tag == "br" else _flatten(child))
            loose.append(child.tail or "")
        flush()

    def item(self, item: etree._Element, in_list: etree._Element) -> None:
        """A list item: one line of its list, or, holding blocks, its blocks, the first marked."""
        if self.holds_blocks(item):
            self.marker = "- "
            self.read(item)
            self.marker = ""
        else:
            self.add("- " + _paragraph(item), group=in_list)

    def holds_blocks(self, element: etree._Element) -> bool:
        """Whether an item or cell is read block by block: one that holds a lone paragraph (DocBook
        writes every list item as one) stays one line of its list or table."""
        if element not in self.holders:
            return False
        blocks = [inner for inner in element.iterdescendants() if inner.tag in BLOCK_TAGS or inner in self.holders]
        return not (len(blocks) == 1 and blocks[0].tag == "p")

    def row(self, row: etree._Element) -> None:
        """A table row: one line of its table, cells between " | " (the empty ones at its ends
        left out: a layout table's icon cell); a row whose cells hold blocks, their blocks."""
        cells = [cell for cell in row if cell.tag in CELL_TAGS]
        if any(self.holds_blocks(cell) for cell in cells):
            for cell in cells:
                self.read(cell)
            return
        texts = [_paragraph(cell) for cell in cells]
        while texts and not texts[-1]:
            texts.pop()
        while texts and not texts[0]:
            texts.pop(0)
        table = row.getparent()
        if table is not None and table.tag in {"tbody", "thead", "tfoot"}:
            table = table.getparent()
        self.add(" | ".join(texts), group=table)


class _KeptText:
    """The text trafilatura kept of a page, whitespace left out (its own spacing glues words), to
    tell which of the page's blocks it kept: a block is kept where its first KEY_CHARS characters
    are found there, a short block only a little after the last block found, as it stands on the
    page (a menu's "Home" is not kept for a word of the text)."""

    KEY_CHARS = 40
    SHORT_KEY = 20
    SHORT_WINDOW = 200

    def __init__(self, kept: str) -> None:
        self.kept = _squeezed(kept)
        self.cursor = 0

    def holds(self, block: str) -> bool:
        whole = _squeezed(block.removeprefix("- ").replace(" | ", ""))
        key = whole[: self.KEY_CHARS]
        at = self.kept.find(key, self.cursor)
        if len(key) < self.SHORT_KEY:
            if at < 0 or at > self.cursor + self.SHORT_WINDOW:
                return False
        elif at < 0:
            return self.kept.find(key) >= 0  # moved by trafilatura: kept, but the place is not followed
        self.cursor = at + (len(whole) if self.kept.startswith(whole, at) else len(key))
        return True


def _titles_a_box(heading: etree._Element) -> bool:
    parent = heading.getparent()
    return parent is not None and not BOX_CLASSES.isdisjoint(parent.get("class", "").split())


def _squeezed(text: str) -> str:
    return _SPACES.sub("", text)


def _block_holders(content: etree._Element) -> set[etree._Element]:
    """The elements under `content` that hold a block element (found once, without recursion)."""
    holders: set[etree._Element] = set()
    for element in content.iter(*BLOCK_TAGS):
        if element is content:
            continue
        parent = element.getparent()
        while parent is not None and parent not in holders:
            holders.add(parent)
            if parent is content:
                break
            parent = parent.getparent()
    return holders


def _paragraph(element: etree._Element) -> str:
    """An element's text with whitespace collapsed and line breaks (<br>) kept."""
    return _inline("".join(_flatten(element)))


def _flatten(element: etree._Element) -> list[str]:
    pieces = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str):
            pieces.extend([BREAK] if child.tag == "br" else _flatten(child))
        pieces.append(child.tail or "")
    return pieces


def _inline(text: str) -> str:
    """Whitespace collapsed as a browser does, the line breaks of <br> kept."""
    return "\n".join(_SPACES.sub(" ", line).strip() for line in text.split(BREAK)).strip()
