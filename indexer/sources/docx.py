"""The text of a Word document (.docx, python-docx): paragraphs and tables in order, headings marked.

A paragraph styled "Title" or "Heading N" (the built-in styles, and styles based on them) is a
heading of level 0 or N; a table is one line per row, its cells joined with " | " (a cell's own
paragraphs joined with spaces, a cell merged across columns given once).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import BinaryIO

import regex

from .archive_limits import check_zip
from .outline import BlockText, NotReadable

_HEADING_STYLE = regex.compile(r"(?i)heading\s*([1-9])|title")


def docx_text(path: Path | BinaryIO) -> tuple[str, BlockText]:
    """(title from the document's properties, else its first Title or heading; text with heading
    marks). NotReadable for a package that would inflate past archive_limits; python-docx's errors
    propagate."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        check_zip(path)
        document = docx.Document(str(path) if isinstance(path, Path) else path)
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile):
        raise NotReadable("not a Word document (.docx); convert it or exclude it") from None
    text = BlockText()
    first_heading = ""
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                cells = list(dict.fromkeys(row.cells))  # a merged cell appears once per column it spans
                text.add(" | ".join(" ".join(cell.text.split()) for cell in cells), group=block)
            continue
        level = _heading_level(block.style)
        if level is not None:
            first_heading = first_heading or block.text.strip()
            text.heading(level, block.text)
        else:
            text.add(block.text)
    return (document.core_properties.title or first_heading).strip(), text


def _heading_level(style: object) -> int | None:
    """The heading level of a paragraph style or of the style it is based on (Title is 0)."""
    while style is not None:
        found = _HEADING_STYLE.fullmatch(getattr(style, "name", "") or "")
        if found:
            return int(found.group(1)) if found.group(1) else 0
        style = getattr(style, "base_style", None)
    return None
