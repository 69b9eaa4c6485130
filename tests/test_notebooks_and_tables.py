"""Jupyter notebooks (cells in order, sections from their headings, no outputs) and CSV/TSV tables
(rows as records, fields as metadata, bounded by rows and field size), read and then searched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.sources import tables
from arag_mcp.indexer.sources.document import Document, SkippedFile
from arag_mcp.indexer.sources.files import iter_documents
from arag_mcp.indexer.sources.outline import heading_path
from arag_mcp.server.app import create_server
from mcp import Client

from .conftest import HASHED_MODEL, live_index


def read(path: Path) -> tuple[list[Document], list[SkippedFile]]:
    skipped: list[SkippedFile] = []
    return list(iter_documents([path], skipped)), skipped


def write_notebook(path: Path, cells: list[dict]) -> Path:
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def markdown(source: str | list[str], **fields: object) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source, **fields}


def code(source: str | list[str], outputs: list[dict] | None = None) -> dict:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source, "outputs": outputs or []}


OUTPUTS = [
    {"output_type": "stream", "name": "stdout", "text": ["printed output\n"]},
    {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"text/plain": ["'a result'"]}},
    {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo="}},
]


def test_notebook_cells_are_blocks_in_order_each_in_the_section_of_the_heading_above(tmp_path: Path):
    path = write_notebook(
        tmp_path / "pumps.ipynb",
        [
            markdown(["# Harbour pumps\n", "\n", "How the pumps are tuned."]),
            code(["import pump\n", "\n", "    pump.start()\n"], OUTPUTS),
            markdown("Calibration\n-----------\nSet the valve.", attachments={"a.png": {"image/png": "QUJD"}}),
            code("# a comment, not a heading\nvalve.set(3)"),
            {"cell_type": "raw", "metadata": {}, "source": "raw .. text"},
            markdown("#### Fine tuning\n\n## Results"),
            code("print(pump.level)", OUTPUTS),
            code("   \n"),
        ],
    )
    [document], skipped = read(path)
    assert skipped == []
    cells = [
        "# Harbour pumps\n\nHow the pumps are tuned.",
        "import pump\n\n    pump.start()",
        "Calibration\n-----------\nSet the valve.",
        "# a comment, not a heading\nvalve.set(3)",
        "raw .. text",
        "#### Fine tuning\n\n## Results",
        "print(pump.level)",
    ]
    assert document.text == "\n\n".join(cells)
    assert document.title == "Harbour pumps" and document.file_type == "ipynb" and document.metadata == {}
    sections = [heading_path(document.headings, document.text.index(cell)) for cell in cells]
    assert sections == [
        ("Harbour pumps",),
        ("Harbour pumps",),
        ("Harbour pumps", "Calibration"),
        ("Harbour pumps", "Calibration"),
        ("Harbour pumps", "Calibration"),
        ("Harbour pumps", "Calibration", "Fine tuning"),
        ("Harbour pumps", "Results"),
    ]
    assert [path for _, path in document.headings][-1] == ("Harbour pumps", "Results")
    for left_out in ("printed output", "a result", "iVBOR", "QUJD", "image/png"):
        assert left_out not in document.text


def test_a_notebook_without_headings_is_titled_by_its_stem_and_nbformat_3_is_read(tmp_path: Path):
    write_notebook(tmp_path / "scratch.ipynb", [code("x = 1"), markdown("Just notes.")])
    version_3 = {
        "nbformat": 3,
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "heading", "level": 2, "source": ["Old style"]},
                    {"cell_type": "code", "input": ["y = 2"], "outputs": [{"output_type": "pyout", "text": ["2"]}]},
                ]
            }
        ],
    }
    (tmp_path / "old.ipynb").write_text(json.dumps(version_3))
    scratch, old = sorted(read(tmp_path)[0], key=lambda d: d.source, reverse=True)
    assert (scratch.title, scratch.text, scratch.headings) == ("scratch", "x = 1\n\nJust notes.", ())
    assert (old.title, old.text, old.headings) == ("Old style", "## Old style\n\ny = 2", ((0, ("Old style",)),))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"cells": [\n  {"cell_type": "code",}\n]}', "line 2: invalid JSON (Expecting property name"),
        ('[{"cell_type": "code", "source": "x"}]', 'not a Jupyter notebook (no "cells" list); save it from Jupyter'),
        ('{"cells": [{"source": "x"}]}', 'damaged notebook: cell 1 is not an object with a "cell_type"; fix the cell'),
        (
            '{"cells": [{"cell_type": "code", "source": "x"}, {"cell_type": "code", "source": 5}]}',
            'damaged notebook: the "source" of cell 2 is neither',
        ),
        ('{"cells": [{"cell_type": "code", "source": ""}]}', "empty"),
    ],
)
def test_a_notebook_that_cannot_be_read_is_skipped_with_one_line(tmp_path: Path, content: str, expected: str):
    (tmp_path / "bad.ipynb").write_text(content)
    documents, [skipped] = read(tmp_path / "bad.ipynb")
    assert documents == [] and skipped.reason.startswith(expected) and "\n" not in str(skipped)


def test_csv_rows_are_records_whose_other_fields_are_metadata(tmp_path: Path):
    path = tmp_path / "parts.csv"
    path.write_bytes(
        "\ufeffID,Title,text,category,year\n"
        "p1,Valve 12,A brass valve.,valve,2021\n"
        ',Pump 3,"A small pump,\nfor rain water.",pump,\n'
        "\n"
        "p4,Crane 1,,crane,2019\n"
        "p5,Café,Le café du port.,,2020\n".encode()
    )
    documents, skipped = read(path)
    file = path.resolve().as_posix()
    assert skipped == []
    assert [(d.doc_id, d.title, d.text) for d in documents] == [
        ("p1", "Valve 12", "A brass valve."),
        (f"{file}:3", "Pump 3", "A small pump,\nfor rain water."),
        ("p5", "Café", "Le café du port."),
    ]
    assert [d.metadata for d in documents] == [
        {"category": "valve", "year": "2021"},
        {"category": "pump"},
        {"year": "2020"},
    ]
    assert {(d.source, d.file_type, d.path) for d in documents} == {("parts.csv", "csv", file)}


def test_a_table_without_a_text_column_is_its_field_lines_and_every_field_is_metadata(tmp_path: Path):
    path = tmp_path / "bolts.tsv"
    path.write_bytes(
        "title\tsize\tcolour, finish\nHex bolt\tM8\tzinc, bright\nCarriage bolt\t\tcaf\xe9\n".encode("latin-1")
    )
    first, second = read(path)[0]
    assert (first.doc_id, first.title) == (f"{path.resolve().as_posix()}:2", "Hex bolt")
    assert first.text == "title: Hex bolt\nsize: M8\ncolour, finish: zinc, bright"
    assert first.metadata == {"size": "M8", "colour, finish": "zinc, bright"}
    assert second.text == "title: Carriage bolt\ncolour, finish: café" and second.metadata == {"colour, finish": "café"}
    semicolons = tmp_path / "prices.csv"
    semicolons.write_text("item;price\nbolt;0,20\n")
    [row] = read(semicolons)[0]
    assert row.text == "item: bolt\nprice: 0,20" and row.metadata == {"item": "bolt", "price": "0,20"}


def test_bad_rows_are_skipped_naming_their_line_and_the_rest_are_kept(tmp_path: Path):
    path = tmp_path / "rows.csv"
    long_field = "x" * (tables.MAX_FIELD_CHARS + 1)
    path.write_text(f"id,text\na,First.\nb,Second,extra\nc,{long_field}\nd,Fourth.\n")
    documents, skipped = read(path)
    assert [d.doc_id for d in documents] == ["a", "d"]
    assert [item.reason for item in skipped] == [
        "line 3: wrong number of fields (3, the header row has 2); quote fields that hold the separator, or fix the row",
        f"line 4: unreadable row (field larger than field limit ({tables.MAX_FIELD_CHARS})); "
        "close a quote left open, or fix the row",
    ]
    assert all(item.path == "rows.csv" and not item.indexed for item in skipped)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("twice.csv", b"id,text,Text\n1,a,b\n", 'line 1: repeated column name ("text" names two columns); rename one'),
        ("binary.csv", b"id,text\n\x00\x01\x02\x03" * 100, "binary"),
        ("header.csv", b"id,text\n", "empty"),
    ],
)
def test_a_table_that_cannot_be_read_is_skipped_with_one_line(tmp_path: Path, name: str, content: bytes, expected: str):
    (tmp_path / name).write_bytes(content)
    documents, [skipped] = read(tmp_path / name)
    assert documents == [] and skipped.reason.startswith(expected)


def test_a_table_over_the_row_cap_keeps_its_first_rows_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tables, "MAX_ROWS", 3)
    path = tmp_path / "log.csv"
    path.write_text("text\n" + "".join(f"row {n}\n" for n in range(1, 6)))
    documents, [notice] = read(path)
    assert [d.text for d in documents] == ["row 1", "row 2", "row 3"]
    assert notice.indexed and notice.reason == "indexed, first 3 rows of 5; split the file to index the rest"


@pytest.mark.anyio
async def test_a_csv_field_scopes_a_search_and_a_notebook_chunk_shows_its_section(tmp_path: Path):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "parts.csv").write_text(
        "id,title,text,category,year\n"
        "p1,Valve 12,A brass valve near the pump house leaks in winter.,valve,2021\n"
        "p2,Valve 14,A steel valve closes the dock when the pump stops.,valve,2023\n"
        "p3,Pump 3,A small pump with a valve drains the quay.,pump,2023\n"
    )
    tuning = "The pump is tuned by hand before each tide, and the valve is checked for leaks. " * 4
    write_notebook(
        folder / "pumps.ipynb",
        [
            markdown(f"# Harbour pumps\n\n{tuning}"),
            code(
                "import pump\n\npump.start()\npump.wait(seconds=30)\nprint(pump.level, pump.pressure, pump.flow, pump.temperature)"
            ),
            markdown("## Calibration\n\nSet the impeller speed."),
            code("pump.impeller(speed=3)", OUTPUTS),
        ],
    )
    Index(str(tmp_path / "idx")).add([folder], BuildOptions(model=HASHED_MODEL, progress=False, chunk_tokens=40))
    with live_index(tmp_path / "idx", load_model=False) as live:
        async with Client(create_server(live)) as client:
            scoped = await client.call_tool(
                "keyword_search", {"keywords": ["valve"], "scope": {"category": "valve", "year": 2023}}
            )
            impeller = await client.call_tool("keyword_search", {"keywords": ["impeller"]})
    [row] = scoped.structured_content["results"]
    assert (row["title"], row["metadata"]) == ("Valve 14", {"category": "valve", "year": "2023"})
    assert scoped.structured_content["source"] == "kb/parts.csv"  # the results' one source, said once
    [cell] = impeller.structured_content["results"]
    assert (cell["title"], cell["section"], impeller.structured_content["source"]) == (
        "Harbour pumps",
        "Calibration",
        "kb/pumps.ipynb",
    )
    assert "printed output" not in impeller.content[0].text
