"""Does the HTML reader keep a page's sections and its words as a browser shows them?

For every HTML page under the folders given, the page is read as a build reads it (the same
reader, chunked as the build chunks it with the default model's tokenizer), and compared with
the page's main content rendered here independently of the reader: the <body> without what is
never content (scripts, styles, <nav>, <header>, <footer>, <aside>, role="navigation", hidden
elements) and without DocBook's navigation (div.navheader, div.navfooter) and tables of contents
(div.toc, div.list-of-tables and the like). Reported per folder:

- ``heading share``: of the chunks of pages whose main content has an h1-h6 heading, the share
  that carry a section (a non-empty heading path);
- ``word recall``: the words (``\\w+`` runs, case kept) of the main content as a browser renders
  it (block elements and <br> break lines; inline elements add nothing, so ``<b>foo</b>bar`` is
  one word) found in the extracted text, counted with multiplicity;
- ``spaced recall``: the same with every element boundary taken as a space (``foo``, ``bar``),
  a reference that the reader may fall short of only where the source glues inline elements;
- ``pair recall``: consecutive word pairs of the rendered content found consecutive in the
  extracted text (text moved within a paragraph or glued loses pairs);
- ``glued words``: extracted words the rendered content lacks (beyond its count) that are two
  consecutive words of it joined.

    python bench/html_text.py /usr/share/debian-reference /usr/share/doc/postgresql-doc-15/html
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import lxml.html
from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer import Embedder  # noqa: E402
from arag_mcp.indexer.build_options import DEFAULT_CHUNK_TOKENS  # noqa: E402
from arag_mcp.indexer.rows import chunk_document  # noqa: E402
from arag_mcp.indexer.sources.document import SkippedFile  # noqa: E402
from arag_mcp.indexer.sources.files import Source, list_files, read_file  # noqa: E402
from arag_mcp.indexer.sources.outline import heading_path  # noqa: E402
from common import RESULTS, log, write_json  # noqa: E402

NOT_CONTENT = (
    "//script | //style | //noscript | //template | //nav | //header | //footer | //aside"
    " | //*[@role='navigation'] | //*[@hidden]"
    " | //div[contains(concat(' ', normalize-space(@class), ' '), ' navheader ')]"
    " | //div[contains(concat(' ', normalize-space(@class), ' '), ' navfooter ')]"
    " | //div[contains(concat(' ', normalize-space(@class), ' '), ' toc ')]"
    " | //div[starts-with(@class, 'list-of-')]"
)
BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption dd details div dl dt figcaption figure footer form h1 h2 h3 h4 h5"
    " h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul".split()
)
"""Elements a browser lays out as blocks (table cells included: they never run into each other)."""
WORD = re.compile(r"\w+")


def main_content(html: str) -> etree._Element | None:
    """The page's <body> without what is never content."""
    page = lxml.html.document_fromstring(re.sub(r"\A\s*<\?xml[^>]*\?>", "", html, count=1))
    body = page.find("body")
    if body is None:
        return None
    for element in body.xpath(NOT_CONTENT):
        element.drop_tree()
    return body


def rendered_text(element: etree._Element, spaced: bool) -> str:
    """The element's text as a browser lays it out: blocks and <br> on lines of their own, inline
    elements joined as the source joins them (or, `spaced`, every element boundary a space)."""
    pieces: list[str] = []

    def walk(node: etree._Element) -> None:
        if not isinstance(node.tag, str):
            pieces.append(node.tail or "")
            return
        boundary = "\n" if node.tag in BLOCK_TAGS or node.tag == "br" else " " if spaced else ""
        pieces.extend([boundary, node.text or ""])
        for child in node:
            walk(child)
        pieces.extend([boundary, node.tail or ""])

    walk(element)
    return "".join(pieces)


def words(text: str) -> list[str]:
    return WORD.findall(text)


def overlap(expected: Iterable, found: Iterable) -> tuple[int, int]:
    """(items of `expected` found in `found`, counted with multiplicity; items expected)."""
    want, have = Counter(expected), Counter(found)
    return sum(min(count, have[item]) for item, count in want.items()), sum(want.values())


def glued(extracted: list[str], reference: list[str]) -> list[str]:
    """Extracted words beyond the reference's count of them that are two consecutive reference words joined."""
    pairs, surplus = set(zip(reference, reference[1:])), Counter(extracted) - Counter(reference)
    found = []
    for word, count in surplus.items():
        if any((word[:cut], word[cut:]) in pairs for cut in range(1, len(word))):
            found.extend([word] * count)
    return found


def measure(folder: Path, embedder: Embedder, chunk_tokens: int) -> dict:
    skipped: list[SkippedFile] = []
    totals = Counter()
    glued_examples: list[str] = []
    page_recall: list[tuple[float, str]] = []
    for path, source in list_files([Source.at(folder)], skipped):
        if path.suffix.lower() not in {".html", ".htm"}:
            continue
        totals["pages"] += 1
        body = main_content(path.read_text(encoding="utf-8", errors="replace"))
        documents = list(read_file(path, source, skipped))
        extracted = words(documents[0].text) if documents else []
        reference = words(rendered_text(body, spaced=False)) if body is not None else []
        spaced = words(rendered_text(body, spaced=True)) if body is not None else []
        for name, expected, found in (
            ("words", reference, extracted),
            ("spaced words", spaced, extracted),
            ("pairs", zip(reference, reference[1:]), zip(extracted, extracted[1:])),
        ):
            hit, total = overlap(expected, found)
            totals[f"{name} found"] += hit
            totals[f"{name} expected"] += total
            if name == "words" and total:
                page_recall.append((round(100 * hit / total, 2), str(path.relative_to(folder))))
        joined = glued(extracted, reference)
        totals["glued words"] += len(joined)
        glued_examples.extend(f"{path.name}: {word}" for word in joined[:3])
        has_headings = body is not None and bool(body.xpath(".//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6"))
        for document in documents:
            chunks = chunk_document(document, embedder, chunk_tokens)
            totals["chunks"] += len(chunks)
            if has_headings:
                totals["chunks of headed pages"] += len(chunks)
                totals["with a section"] += sum(
                    bool(heading_path(document.headings, spans[0].start)) for spans in chunks
                )
    share = lambda part, whole: round(100 * totals[part] / max(1, totals[whole]), 2)  # noqa: E731
    return {
        "pages": totals["pages"],
        "chunks": totals["chunks"],
        "chunks of headed pages": totals["chunks of headed pages"],
        "with a section": totals["with a section"],
        "heading share": share("with a section", "chunks of headed pages"),
        "word recall": share("words found", "words expected"),
        "spaced recall": share("spaced words found", "spaced words expected"),
        "pair recall": share("pairs found", "pairs expected"),
        "words": totals["words expected"],
        "glued words": totals["glued words"],
        "glued examples": glued_examples[:30],
        "lowest word recall": sorted(page_recall)[:15],
        "skipped": [str(skip) for skip in skipped],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="folders of HTML pages")
    parser.add_argument("--chunk-tokens", type=int, default=DEFAULT_CHUNK_TOKENS)
    parser.add_argument("--out", type=Path, default=RESULTS / "html_text.json")
    args = parser.parse_args(argv)
    embedder = Embedder().load()
    results: dict[str, dict] = {}
    for folder in args.folders:
        results[str(folder)] = measure(folder, embedder, args.chunk_tokens)
        write_json(args.out, results)
        log(f"{folder}: {results[str(folder)]['pages']} pages")
    print(
        f"{'folder':45} {'pages':>5} {'chunks':>6} {'heading share':>17} {'word recall':>11} {'spaced':>7} "
        f"{'pairs':>6} {'glued':>6}"
    )
    for folder, figures in results.items():
        sections = f"{figures['with a section']}/{figures['chunks of headed pages']}"
        print(
            f"{folder[-45:]:45} {figures['pages']:5} {figures['chunks']:6} {sections:>10} {figures['heading share']:5.1f}%"
            f" {figures['word recall']:10.2f}% {figures['spaced recall']:6.2f}% {figures['pair recall']:5.2f}%"
            f" {figures['glued words']:6}"
        )
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
