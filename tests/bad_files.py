"""Files that cost a reader far more than their size suggests, or hold one bad value: generated at
any size, small in the unit tests and at the sizes of the issue in bench/bad_files.py and
tests/e2e/test_bad_files.py (`ARAG_FULL_SIZES=1`)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

from .bombs import DOCUMENT_XML, MB, _document_xml, docx_without_document

WORDS = (
    "radium polonium uranium thorium element glows blue dark measured curie laboratory sample decay "
    "isotope atom nucleus energy heat light paper notebook winter paris warsaw study prize physics "
    "chemistry salt ore tonne pitchblende careful patient years work shed cold rain long hours"
).split()
GOOD_RECORD = {"text": "Radium glows blue in the dark.", "title": "Radium"}


def deep_jsonl(path: Path, depth: int) -> None:
    """Three records, the second with a field nested `depth` lists deep."""
    deep = '{"text": "A record nested deeply.", "nested": ' + "[" * depth + "]" * depth + "}"
    again = {**GOOD_RECORD, "title": "Radium again", "text": "Radium was found in 1898."}
    lines = [json.dumps(GOOD_RECORD), deep, json.dumps(again)]
    path.write_text("\n".join(lines) + "\n")


def huge_int_json(path: Path, digits: int = 5000) -> None:
    """A JSON list of two records, the second holding an integer of `digits` digits."""
    path.write_text(f'[{json.dumps(GOOD_RECORD)}, {{"text": "A large number.", "count": {"7" * digits}}}]')


def bad_front_matter(folder: Path, digits: int = 5000) -> list[Path]:
    """Markdown files whose front matter cannot become metadata: a date that is not in the
    calendar, an integer tag on a word, an integer of `digits` digits."""
    values = {"date.md": "date: 2024-02-30", "tag.md": "count: !!int abc", "digits.md": f"count: {'7' * digits}"}
    paths = []
    for name, value in values.items():
        paths.append(folder / name)
        paths[-1].write_text(f"---\ntitle: Notes\n{value}\n---\n# Radium\n\nRadium glows blue in the dark.\n")
    return paths


def one_line_run(path: Path, size: int) -> None:
    """A short sentence, then one run of `size` letters without a space, on one line."""
    with path.open("w") as handle:
        handle.write("A short sentence comes first. ")
        for _ in range(size // MB):
            handle.write("x" * MB)
        handle.write("x" * (size % MB))


def one_line_words(path: Path, size: int) -> None:
    """About `size` characters of words on one line, without a full stop."""
    chooser = random.Random(7)
    with path.open("w") as handle:
        for piece in _word_pieces(chooser, size):
            handle.write(piece)


def dense_docx(path: Path, xml_size: int) -> None:
    """A .docx whose word/document.xml is about `xml_size` bytes of one-word paragraphs: many
    elements for its size, deflating about 14 times."""
    chooser = random.Random(7)
    blocks = [
        "".join(
            f"<w:p><w:r><w:t>{chooser.choice(WORDS)}{chooser.randrange(100)}</w:t></w:r></w:p>" for _ in range(10_000)
        ).encode()
        for _ in range(50)
    ]
    head, tail = _document_xml()
    with docx_without_document(path) as package, package.open(DOCUMENT_XML, "w", force_zip64=True) as document:
        document.write(head)
        written = 0
        while written < xml_size:
            block = chooser.choice(blocks)
            document.write(block)
            written += len(block)
        document.write(tail)


def html_text(path: Path, size: int) -> None:
    """An HTML page holding about `size` characters of text in paragraphs."""
    chooser = random.Random(7)
    with path.open("w") as handle:
        handle.write("<html><head><title>Long page</title></head><body><article>")
        for piece in _word_pieces(chooser, size, per_piece=60):
            handle.write(f"<p>{piece}.</p>\n")
        handle.write("</article></body></html>")


def html_markup(path: Path, size: int) -> None:
    """An HTML page of about `size` bytes of small elements with a letter each."""
    block = "<div><span>a</span><b>b</b></div>\n" * 1000
    with path.open("w") as handle:
        handle.write("<html><head><title>Markup</title></head><body>")
        for _ in range(size // len(block)):
            handle.write(block)
        handle.write("</body></html>")


def many_sections(path: Path, sections: int) -> None:
    """Markdown of `sections` short sections, each with emphasis and a link: slow to read whatever
    the machine (about 0.1 s per 12,000 sections on 2 cores), with no library's fast path to skip it."""
    with path.open("w") as handle:
        handle.write("# Many sections\n\n")
        for number in range(sections):
            handle.write(
                f"## Section {number}\n\nSome *emphasis* and a [link](http://x/{number}) in paragraph {number}.\n\n"
            )


def long_front_matter(path: Path, size: int) -> None:
    """Markdown with about `size` bytes of plain YAML front matter (no aliases)."""
    with path.open("w") as handle:
        handle.write("---\ntitle: Long front matter\n")
        line, written = 0, 0
        while written < size:
            entry = f"key{line}: value of entry {line}\n"
            handle.write(entry)
            written += len(entry)
            line += 1
        handle.write("---\n# Radium\n\nRadium glows blue in the dark.\n")


def _word_pieces(chooser: random.Random, size: int, per_piece: int = 10_000) -> Iterator[str]:
    """Pieces of space-separated words, `per_piece` words each, about `size` characters in all."""
    written = 0
    while written < size:
        piece = " ".join(chooser.choices(WORDS, k=per_piece)) + " "
        yield piece
        written += len(piece)
