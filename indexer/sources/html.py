"""The main content of an HTML page, as text with its headings marked.

trafilatura finds the main content (it drops menus, sidebars, tables of contents, footers and
other boilerplate by their markup and link density). Before it runs, what is never content is
cut out by its markup: <nav>, <aside>, <footer>, role="navigation", buttons ("copy"), a page
<header> outside an <article>, and heading permalink marks (an anchor "#" or "¶" inside a
heading). A page too short for trafilatura to judge is read whole, with the same cuts.

Headings become blocks that mark sections; paragraphs, list items and table rows are blocks with
their whitespace collapsed; code blocks keep theirs.
"""

from __future__ import annotations

import lxml.html
import regex
import trafilatura
from lxml import etree

from .outline import BlockText, NotReadable

NEVER_CONTENT = (
    "//nav | //aside | //footer | //button | //script | //style | //noscript | //template"
    " | //*[@role='navigation'] | //*[@hidden] | //header[not(ancestor::article)]"
)
PERMALINK_LABELS = frozenset({"", "#", "¶", "§", "🔗", "link"})
HEADING_TAGS = {f"h{level}": level for level in range(1, 7)}
BLOCK_CONTAINERS = frozenset(
    "main div section article body list ul ol dl table tbody thead tfoot quote blockquote figure details".split()
)
"""Elements whose children are blocks (trafilatura's XML and HTML names)."""
CODE_TAGS = frozenset({"code", "pre"})
ITEM_TAGS = frozenset({"item", "li", "dt", "dd"})
ROW_TAGS = frozenset({"row", "tr"})
LINE_BREAKS = frozenset({"lb", "br"})
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
_HTML_PARSER = lxml.html.HTMLParser(huge_tree=True)
_XML_PARSER = etree.XMLParser(huge_tree=True)


def html_to_text(html: str) -> tuple[str, BlockText]:
    """(title, main content) of an HTML page: title from <title>, else the first <h1>."""
    try:
        page = lxml.html.document_fromstring(_XML_DECLARATION.sub("", html, count=1), parser=_HTML_PARSER)
    except etree.ParserError:  # nothing but whitespace or comments
        return "", BlockText()
    _check_shape(page)
    title = page.findtext(".//title") or ""
    if not title.strip():
        first = page.find(".//h1")
        title = first.text_content() if first is not None else ""
    for element in page.xpath(NEVER_CONTENT):
        _drop(element)
    for anchor in page.xpath("//h1//a | //h2//a | //h3//a | //h4//a | //h5//a | //h6//a"):
        if anchor.text_content().strip().lower() in PERMALINK_LABELS:
            _drop(anchor)
    extracted = trafilatura.extract(
        page, output_format="xml", include_formatting=True, include_tables=True, include_comments=False,
        favor_recall=True,
    )  # fmt: skip
    content = etree.fromstring(extracted.encode(), _XML_PARSER).find("main") if extracted else page.find("body")
    text = BlockText()
    if content is not None:
        _blocks(content, text)
    return " ".join(title.split()), text


def _check_shape(page: etree._Element) -> None:
    """NotReadable where elements nest deeper than MAX_DEPTH or one text is longer than
    MAX_TEXT_NODE_CHARS (both found without recursion)."""
    depth = 0
    for event, element in etree.iterwalk(page, events=("start", "end")):
        depth += 1 if event == "start" else -1
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


def _blocks(element: etree._Element, text: BlockText) -> None:
    """Add the blocks under `element` to `text`, in document order; inline content between
    blocks is a paragraph of its own."""
    loose = [element.text or ""]

    def flush() -> None:
        text.add(_inline("".join(loose)))
        loose.clear()

    for child in element:
        tag = child.tag if isinstance(child.tag, str) else None
        level = HEADING_TAGS.get(tag or "") or _trafilatura_heading(child)
        if tag is None:
            pass
        elif level:
            flush()
            text.heading(level, child.xpath("string()"))
        elif tag in CODE_TAGS and (tag == "pre" or element.tag != "p"):
            flush()
            text.add(child.xpath("string()"))
        elif tag in ITEM_TAGS:
            flush()
            text.add("- " + _paragraph(child), group=element)
        elif tag in ROW_TAGS:
            flush()
            text.add(" | ".join(_paragraph(cell) for cell in child if isinstance(cell.tag, str)), group=element)
        elif tag in BLOCK_CONTAINERS:
            flush()
            _blocks(child, text)
        elif tag == "p":
            flush()
            text.add(_paragraph(child))
        else:
            loose.append(BREAK if tag in LINE_BREAKS else "".join(_flatten(child)))
        loose.append(child.tail or "")
    flush()


def _trafilatura_heading(element: etree._Element) -> int | None:
    """The level of trafilatura's <head rend="h2">."""
    if element.tag != "head":
        return None
    rend = element.get("rend", "h2")
    return int(rend[1]) if regex.fullmatch(r"h[1-6]", rend) else 2


def _paragraph(element: etree._Element) -> str:
    """An element's text with whitespace collapsed and line breaks (<br>, <lb>) kept."""
    return _inline("".join(_flatten(element)))


def _flatten(element: etree._Element) -> list[str]:
    pieces = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str):
            pieces.extend([BREAK] if child.tag in LINE_BREAKS else _flatten(child))
        pieces.append(child.tail or "")
    return pieces


def _inline(text: str) -> str:
    """Whitespace collapsed as a browser does, the line breaks of <br> kept."""
    return "\n".join(_SPACES.sub(" ", line).strip() for line in text.split(BREAK)).strip()
