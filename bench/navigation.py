"""How much of an HTML documentation folder's chunks is navigation, as the readers cut it.

A page's navigation is the link labels inside its menus: <nav>, role="navigation", and the
elements whose id or class names a sidebar, table of contents or menu (`#column2` and `#toc` in
the Node.js API docs). A chunk line is navigation when, stripped of a list bullet, it is one of
its page's labels (whitespace collapsed, case ignored); a chunk is *mostly navigation* when more
than half of its non-blank characters are in navigation lines. Chunks are cut as `arag-index`
cuts them (1,000 tokens of the packaged model's tokenizer, on sentence boundaries).

    python bench/navigation.py                      # the readers of this checkout
    python bench/navigation.py --revision 303514a   # indexer/readers.py of an older commit

Prints pages, chunks, chunks mostly navigation and their share, and the same for the chunks
that hold the word "Punycode" (a module named in every page's sidebar).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import lxml.html
import regex
from arag_mcp.indexer.embedding.settings import DEFAULT_MODEL_DIR
from arag_mcp.indexer.rows import major_section_starts
from arag_mcp.indexer.text.chunking import pack_chunks, sentence_spans
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
NODE_DOCS = Path("/usr/share/doc/nodejs/api")
CHUNK_TOKENS = 1000
MENUS = (
    "//nav | //*[@role='navigation'] | //*[@id='toc' or @id='column2']"
    " | //*[contains(@class, 'sidebar') or contains(@class, 'toc') or contains(@class, 'menu')]"
)
PROBE = "punycode"
_BULLET = regex.compile(r"^\s*(?:[-*•]|\d+\.)\s+")


def navigation_labels(html: str) -> set[str]:
    page = lxml.html.document_fromstring(html)
    return {_normal(link.text_content()) for menu in page.xpath(MENUS) for link in menu.iter("a")} - {""}


def _normal(line: str) -> str:
    return " ".join(_BULLET.sub("", line).split()).casefold()


def is_mostly_navigation(text: str, labels: set[str]) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    total = sum(len(line.strip()) for line in lines)
    navigation = sum(len(line.strip()) for line in lines if _normal(line) in labels)
    return navigation * 2 > total


def load_readers(revision: str | None):
    """The readers module of this checkout, or of `revision` (indexer/readers.py at that commit)."""
    if revision is None:
        from arag_mcp.indexer.sources import files as readers

        return readers
    source = subprocess.run(
        ["git", "show", f"{revision}:indexer/readers.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "readers_at_revision.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("readers_at_revision", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=NODE_DOCS, help="a folder of .html pages")
    parser.add_argument("--revision", help="measure indexer/readers.py of this git commit")
    args = parser.parse_args(argv)
    pages = sorted(args.docs.glob("*.html"))
    if not pages:
        print(f"{args.docs}: no .html files; install Debian's nodejs docs or pass --docs", file=sys.stderr)
        return 2
    readers = load_readers(args.revision)
    tokenizer = Tokenizer.from_file(str(DEFAULT_MODEL_DIR / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def count(texts):
        return [len(encoding.ids) for encoding in tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def offsets(text):
        return tokenizer.encode(text, add_special_tokens=False).offsets

    chunks = navigation = probed = probed_navigation = 0
    for page in pages:
        labels = navigation_labels(page.read_text(encoding="utf-8", errors="replace"))
        for document in readers.iter_documents([page], []):
            spans = sentence_spans(document.text, count, offsets, CHUNK_TOKENS)
            sections = major_section_starts(getattr(document, "headings", ()))
            for chunk in pack_chunks(spans, CHUNK_TOKENS, sections):
                text = document.text[chunk[0].start : chunk[-1].end]
                mostly = is_mostly_navigation(text, labels)
                chunks += 1
                navigation += mostly
                if regex.search(rf"\b{PROBE}\b", text, regex.I):
                    probed += 1
                    probed_navigation += mostly
    print(f"readers: {args.revision or 'this checkout'}; pages: {len(pages)}; chunks: {chunks}")
    print(f"mostly navigation: {navigation} chunks ({100 * navigation / max(chunks, 1):.1f}%)")
    print(f"chunks holding {PROBE!r}: {probed}, mostly navigation: {probed_navigation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
