"""Jupyter notebooks (`.ipynb`): markdown, code and raw cells in order; outputs and attachments left out.

Each cell is a block of the text, its lines as written, separated from the next by a blank line.
Markdown cells' headings (headings.py) open sections that run on across cells, so a code cell takes
the section of the heading above it; each cell is parsed alone, as Jupyter renders it.
Parsed with `json`, not `nbformat`, which would bring jsonschema, traitlets and jupyter_core into the base install.
"""

from __future__ import annotations

import regex

from .document import Document, FileInput, Skip, SkippedFile, whole_file
from .headings import markdown_headings
from .outline import HeadingStack, composed
from .records import parse_json

_ATX_LEVEL = regex.compile(r" {0,3}(#{1,6})[ \t]")


def read_notebook(input: FileInput, skipped: list[SkippedFile]) -> list[Document]:
    """A notebook as one document, titled by its first heading (else the file stem)."""
    notebook = parse_json(input.text(), "fix the notebook's JSON or exclude it")
    blocks: list[str] = []
    headings: list[tuple[int, tuple[str, ...]]] = []
    stack = HeadingStack()
    end = 0
    for number, cell in enumerate(_cells(notebook), 1):
        kind, source = _cell(cell, number)
        block = composed(source.strip("\n").rstrip())
        if not block.strip():
            continue
        start = end + 2 if blocks else 0
        if kind == "markdown":
            headings.extend(
                (start + offset, stack.enter(_level(block, offset), path[-1]))
                for offset, path in markdown_headings(block)
            )
        blocks.append(block)
        end = start + len(block)
    title = headings[0][1][-1] if headings else ""
    return whole_file(input, title, "\n\n".join(blocks), headings=tuple(headings))


def _cells(notebook: object) -> list[object]:
    """The cells of nbformat 4 ("cells") or 3 ("worksheets", each holding "cells")."""
    if isinstance(notebook, dict):
        if isinstance(notebook.get("cells"), list):
            return notebook["cells"]
        sheets = notebook.get("worksheets")
        if isinstance(sheets, list) and all(
            isinstance(sheet, dict) and isinstance(sheet.get("cells"), list) for sheet in sheets
        ):
            return [cell for sheet in sheets for cell in sheet["cells"]]
    raise Skip('not a Jupyter notebook (no "cells" list); save it from Jupyter (nbformat 4), or exclude it')


def _cell(cell: object, number: int) -> tuple[str, str]:
    """(cell type, source text) of a cell; nbformat 3's heading cells become Markdown headings."""
    if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
        raise Skip(
            f'damaged notebook: cell {number} is not an object with a "cell_type"; fix the cell or exclude the notebook'
        )
    source = cell.get("source", cell.get("input", ""))  # nbformat 3's code cells hold "input"
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise Skip(
            f'damaged notebook: the "source" of cell {number} is neither text nor a list of lines; fix the cell or exclude the notebook'
        )
    if cell["cell_type"] == "heading":
        level = cell.get("level")
        hashes = "#" * (level if isinstance(level, int) and 1 <= level <= 6 else 1)
        return "markdown", f"{hashes} {' '.join(source.split())}"
    return cell["cell_type"], source


def _level(block: str, offset: int) -> int:
    """The level of the heading `markdown_headings` found at `offset`: its #s, else its setext underline's."""
    line_end = block.find("\n", offset)
    atx = _ATX_LEVEL.match(block, offset, line_end if line_end >= 0 else len(block))
    if atx:
        return len(atx.group(1))
    return 1 if block[line_end + 1 :].lstrip(" ").startswith("=") else 2
