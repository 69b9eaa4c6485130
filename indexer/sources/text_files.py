"""Files read as the text they are: plain text, Markdown (YAML front matter becomes metadata) and
reStructuredText that docutils cannot read (rest.py), with the headings each writes (headings.py) as
sections."""

from __future__ import annotations

from dataclasses import replace

from .document import INDEXED, Document, FileInput, Metadata, Skip, SkippedFile, whole_file
from .headings import FrontMatterKept, markdown_headings, rst_headings, split_front_matter
from .outline import HeadingMarks, NotReadable
from .records import check_nesting, metadata_of


def read_plain(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
    return whole_file(input, "", input.text())


def read_markdown(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
    text = input.text()
    body_start = 0
    try:
        text, front_matter = split_front_matter(text)
        check_nesting(front_matter, "front matter", "flatten it")
    except NotReadable as error:
        raise Skip(f"unreadable: {error}") from None
    except FrontMatterKept as kept:
        skipped.append(SkippedFile(input.source, f"{INDEXED}{kept}", input.file))
        front_matter, body_start = {}, kept.body_start
    headings: HeadingMarks = tuple((body_start + offset, path) for offset, path in markdown_headings(text[body_start:]))
    title = str(front_matter.get("title") or "") or _first_heading(headings)
    documents = whole_file(input, title, text, headings=headings)
    return [_with_metadata(document, metadata_of(front_matter, {"title"})) for document in documents]


def read_rst(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
    """reStructuredText as written, its titles as sections: what rest.py reads where docutils cannot."""
    text = input.text()
    headings = rst_headings(text)
    return whole_file(input, _first_heading(headings), text, headings=headings)


def _first_heading(headings: HeadingMarks) -> str:
    return headings[0][1][-1] if headings else ""


def _with_metadata(document: Document, metadata: Metadata) -> Document:
    return replace(document, metadata=metadata) if metadata else document
