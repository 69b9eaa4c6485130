"""Reading sources: formats, titles, ids, metadata, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arag_mcp.indexer.readers import CorpusError, SkippedFile, iter_documents

from .conftest import BENCH_DATA


def read(*sources: Path, exclude=()) -> tuple[list, list[SkippedFile]]:
    skipped: list[SkippedFile] = []
    return list(iter_documents(list(sources), skipped, exclude=exclude)), skipped


def test_text_formats_and_titles(tmp_path: Path):
    (tmp_path / "a.md").write_text("Intro line\n\n## Real Title\n\nBody.")
    (tmp_path / "b.rst").write_text("RST Title\n=========\n\nBody text.")
    (tmp_path / "c.txt").write_text("Plain text.")
    (tmp_path / "d.html").write_text(
        "<html><head><title>Page</title><style>p{}</style><script>x()</script></head>"
        "<body><h1>Head</h1><p>First &amp; para.</p><p>Second para.</p></body></html>"
    )
    documents, skipped = read(tmp_path)
    assert skipped == []
    by_name = {Path(d.source).name: d for d in documents}
    assert [Path(d.source).name for d in documents] == ["a.md", "b.rst", "c.txt", "d.html"]
    assert by_name["a.md"].title == "Real Title"
    assert by_name["b.rst"].title == "RST Title"
    assert by_name["c.txt"].title == "c"
    html = by_name["d.html"]
    assert html.title == "Page" and "First & para.\n\nSecond para." in html.text
    assert "x()" not in html.text and "p{}" not in html.text
    assert html.source == f"{tmp_path.name}/d.html" and html.doc_id == html.source


def test_records_ids_and_metadata(tmp_path: Path):
    (tmp_path / "r.jsonl").write_text(
        json.dumps({"id": 7, "title": "T", "text": "Seven.", "year": 1999, "tags": ["a"]})
        + "\n\n"
        + json.dumps({"_id": "x", "text": "Ex."})
        + "\n"
        + json.dumps({"content": "No id."})
        + "\n"
        + json.dumps({"id": "empty", "text": "  "})
        + "\n"
    )
    (tmp_path / "list.json").write_text(json.dumps({"data": [{"text": "One."}, {"body": "Two.", "title": "B"}]}))
    documents, _ = read(tmp_path / "r.jsonl", tmp_path / "list.json")
    ids = [d.doc_id for d in documents]
    source = (tmp_path / "r.jsonl").as_posix()
    assert ids == [
        "7",
        "x",
        f"{source}:4",
        f"{(tmp_path / 'list.json').as_posix()}#0",
        f"{(tmp_path / 'list.json').as_posix()}#1",
    ]
    assert documents[0].metadata == {"year": 1999, "tags": '["a"]'} and documents[0].title == "T"
    assert documents[4].title == "B" and documents[4].text == "Two."


def test_skipped_files_are_listed(tmp_path: Path):
    (tmp_path / "ok.txt").write_text("Fine.")
    (tmp_path / "empty.md").write_text("\n  \n")
    (tmp_path / "bin.txt").write_bytes(b"abc\x00def")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden.txt").write_text("Hidden.")
    documents, skipped = read(tmp_path)
    assert [Path(d.source).name for d in documents] == ["ok.txt"]
    reasons = {Path(s.path).name: s.reason for s in skipped}
    assert reasons.keys() == {"empty.md", "bin.txt", "broken.pdf"}
    assert reasons["bin.txt"] == "binary" and reasons["empty.md"] == "empty"
    assert reasons["broken.pdf"].startswith("unreadable")
    _, skipped = read(tmp_path / "image.png")
    assert skipped[0].reason == "unsupported extension .png"


def test_pdf_text(tmp_path: Path):
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    stream = DecodedStreamObject()
    stream.set_data(b"BT /F1 12 Tf 72 720 Td (Radium glows blue.) Tj ET")
    page[NameObject("/Contents")] = writer._add_object(stream)
    writer.add_metadata({"/Title": "Glow"})
    with open(tmp_path / "doc.pdf", "wb") as handle:
        writer.write(handle)
    [document], skipped = read(tmp_path / "doc.pdf")
    assert skipped == [] and document.title == "Glow" and "Radium glows blue." in document.text


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("bad.jsonl", '{"text": "ok"}\n{"text": oops}\n', "bad.jsonl line 2: invalid JSON"),
        ("bad.json", '[{"text": "ok"},\n {"text": }]', "bad.json line 2: invalid JSON"),
        ("notext.jsonl", '{"title": "x"}\n', 'line 1: record has no "text" field'),
        ("scalar.jsonl", '"just a string"\n', "line 1: a record must be a JSON object"),
        ("shape.json", '{"a": 1}', "expected a list of records"),
    ],
)
def test_malformed_records_name_file_and_line(tmp_path: Path, name: str, content: str, expected: str):
    (tmp_path / name).write_text(content)
    with pytest.raises(CorpusError) as error:
        read(tmp_path / name)
    assert expected in str(error.value) and "\n" not in str(error.value)


def test_missing_source_and_excluded_index(tmp_path: Path):
    with pytest.raises(CorpusError, match="no such file or folder"):
        read(tmp_path / "nope")
    (tmp_path / "doc.txt").write_text("Text.")
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "manifest.json").write_text("{}")
    documents, _ = read(tmp_path, exclude=[tmp_path / "idx"])
    assert [Path(d.source).name for d in documents] == ["doc.txt"]


@pytest.mark.skipif(not BENCH_DATA.exists(), reason="shared bench-data not present")
def test_shared_corpora_read_as_they_are():
    musique, skipped = read(BENCH_DATA / "musique" / "corpus.jsonl")
    assert len(musique) == 3141 and skipped == [] and musique[0].doc_id == "m00000"
    scifact, _ = read(BENCH_DATA / "scifact" / "corpus.jsonl")
    assert len(scifact) == 5183 and scifact[0].doc_id == "4983" and scifact[0].metadata == {}
