"""Reading sources: formats, titles, ids, metadata, folders, skipped files and bad input."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from arag_mcp.indexer.sources.document import CorpusError, Document, SkippedFile
from arag_mcp.indexer.sources.files import Source, iter_documents

from .conftest import BENCH_DATA


def read(*sources: Path | Source, exclude: tuple[Path, ...] = ()) -> tuple[list[Document], list[SkippedFile]]:
    skipped: list[SkippedFile] = []
    return list(iter_documents(list(sources), skipped, exclude=exclude)), skipped


def read_one(path: Path) -> Document:
    documents, skipped = read(path)
    assert skipped == [] and len(documents) == 1
    return documents[0]


def pdf_bytes(pages: list[str], title: str | None = None) -> bytes:
    """A minimal hand-written PDF: one Helvetica text line a page, optional /Info title."""
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {count} >>"]
    font = 3 + 2 * count
    for i, line in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    if title:
        objects.append(f"<< /Title ({title}) >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    info = f" /Info {len(objects)} 0 R" if title else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_text_files_keep_their_text_and_take_the_first_heading(tmp_path: Path):
    (tmp_path / "a.md").write_text("Intro line\n\n## Real Title ##\n\nBody with **markup**.")
    (tmp_path / "b.rst").write_text("=====\nRST Title\n=====\n\nBody text.")
    (tmp_path / "c.markdown").write_text("Setext Title\n------------\n\nBody.")
    (tmp_path / "d.md").write_text("---\ntitle: front matter\n---\n# After Front Matter\n")
    (tmp_path / "e.md").write_text("No heading here.")
    (tmp_path / "f.txt").write_text("# not a heading in plain text")
    (tmp_path / "g.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (tmp_path / "h.txt").write_bytes("\ufeffBOM text".encode())
    titles = {Path(d.source).name: d.title for d in read(tmp_path)[0]}
    assert titles == {
        "a.md": "Real Title",
        "b.rst": "RST Title",
        "c.markdown": "Setext Title",
        "d.md": "front matter",
        "e.md": "e",
        "f.txt": "f",
        "g.txt": "g",
        "h.txt": "h",
    }
    assert read_one(tmp_path / "a.md").text == "Intro line\n\n## Real Title ##\n\nBody with **markup**."
    assert read_one(tmp_path / "g.txt").text == "café au lait"
    assert read_one(tmp_path / "h.txt").text == "BOM text"


def test_whole_files_are_named_by_path(tmp_path: Path):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "intro.md").write_text("Hello.")
    [document] = read(tmp_path / "docs")[0]
    given = tmp_path / "docs" / "guide" / "intro.md"
    assert document.source == "docs/guide/intro.md" and document.metadata == {}
    assert document.doc_id == document.path == given.resolve().as_posix()
    alone = read_one(given)
    assert alone.source == "intro.md" and alone.doc_id == document.doc_id


def test_ids_do_not_depend_on_how_the_path_is_spelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "new-note.md").write_text("A note.")
    (tmp_path / "link").symlink_to(tmp_path / "notes")
    monkeypatch.chdir(tmp_path / "notes")
    here = read_one(Path("new-note.md"))
    monkeypatch.chdir(tmp_path)
    above = read_one(Path("notes/new-note.md"))
    linked = read_one(Path("link/../notes/./new-note.md"))
    assert here.doc_id == above.doc_id == linked.doc_id == (tmp_path / "notes" / "new-note.md").resolve().as_posix()
    assert here.source == above.source == linked.source == "new-note.md"
    assert "\\" not in here.doc_id and not os.path.isabs(here.source)


def test_html_is_reduced_to_visible_blocks(tmp_path: Path):
    (tmp_path / "page.html").write_text(
        "<html><head><title> The\n Page </title><style>p{color:red}</style><script>alert(1)</script></head>"
        "<body><h1>Head</h1><p>First &amp; <b>only</b>\n   para&#46;</p><p>Line one<br>line two</p>"
        "<ul><li>item a</li><li>item b</li></ul><table><tr><td>x</td><td>y</td></tr></table></body></html>"
    )
    (tmp_path / "no-title.htm").write_text("<h1>Big <i>Heading</i></h1><div>Text</div><h1>Second</h1>")
    page = read_one(tmp_path / "page.html")
    assert page.title == "The Page"
    assert page.text == "Head\n\nFirst & only para.\n\nLine one\nline two\n\n- item a\n- item b\n\nx | y"
    assert page.headings == ((0, ("Head",)),)
    fallback = read_one(tmp_path / "no-title.htm")
    assert fallback.title == "Big Heading" and fallback.text == "Big Heading\n\nText\n\nSecond"
    assert fallback.headings == ((0, ("Big Heading",)), (19, ("Second",)))


def test_jsonl_ids_titles_and_metadata(tmp_path: Path):
    records = [
        {"id": 7, "title": "T", "text": "Seven.", "year": 1999, "score": 0.5, "ok": True, "none": None, "tags": ["a"]},
        {"_id": "x", "text": "Ex.", "metadata": {"lang": "en", "pages": [1, 2]}},
        {"content": "No id."},
        {"id": "empty", "text": "  "},
        {"id": "", "body": "Blank id falls back.", "contents": "Preferred."},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text(
        "\n".join(json.dumps(record) for record in records[:2])
        + "\n\n"
        + "\n".join(json.dumps(record) for record in records[2:])
        + "\n"
    )
    documents, skipped = read(path)
    file = path.resolve().as_posix()
    assert skipped == []
    assert [d.doc_id for d in documents] == ["7", "x", f"{file}:4", f"{file}:6"]
    first, second, third, fourth = documents
    assert first.title == "T" and first.text == "Seven." and first.source == "r.jsonl" and first.path == file
    assert first.metadata == {"year": 1999, "score": 0.5, "ok": True, "none": None, "tags": '["a"]'}
    assert second.title == "" and second.metadata == {"lang": "en", "pages": "[1, 2]"}
    assert third.text == "No id." and third.metadata == {}
    assert fourth.text == "Preferred." and fourth.metadata == {"body": "Blank id falls back."}


@pytest.mark.parametrize(
    "content",
    [
        [{"text": "One."}, {"body": "Two.", "title": "B"}],
        {"data": [{"text": "One."}, {"body": "Two.", "title": "B"}], "version": 2},
    ],
)
def test_json_record_lists(tmp_path: Path, content: object):
    path = tmp_path / "list.json"
    path.write_text(json.dumps(content))
    documents, _ = read(path)
    assert [d.doc_id for d in documents] == [f"{path.resolve().as_posix()}#0", f"{path.resolve().as_posix()}#1"]
    assert [d.text for d in documents] == ["One.", "Two."] and documents[1].title == "B"


def test_json_single_record(tmp_path: Path):
    (tmp_path / "one.json").write_text(json.dumps({"_id": "d1", "title": "One", "text": "Only.", "n": 1}))
    document = read_one(tmp_path / "one.json")
    assert (document.doc_id, document.title, document.text, document.metadata) == ("d1", "One", "Only.", {"n": 1})


def test_folders_are_recursive_sorted_and_leave_out_hidden_and_installed_code(tmp_path: Path):
    corpus = tmp_path / "corpus"
    names = ["b.txt", "a/z.md", "a/b/c.txt", "a.txt", ".hidden.txt", ".git/config.txt", "image.png", "B.TXT"]
    for name in [*names, "node_modules/pkg/README.md", "a/__pycache__/x.txt", "lib/site-packages/m/doc.md"]:
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(f"Text of {name}.")
    documents, skipped = read(corpus, tmp_path / "corpus" / "b.txt")
    assert [d.source for d in documents] == [
        "corpus/B.TXT",
        "corpus/a/b/c.txt",
        "corpus/a/z.md",
        "corpus/a.txt",
        "corpus/b.txt",
        "b.txt",
    ]
    assert skipped == [SkippedFile("corpus/image.png", "unsupported type .png", (corpus / "image.png").as_posix())]


def test_exclude_patterns_are_gitignore_style_from_the_root(tmp_path: Path):
    corpus = tmp_path / "corpus"
    for name in [
        "keep.md",
        "drafts/old.md",
        "a/drafts/inner.md",
        "a/notes.log.txt",
        "sub/only-here.md",
        "x/sub/kept.md",
    ]:
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(f"Text of {name}.")
    documents, skipped = read(Source.at(corpus, exclude=["drafts/", "*.log.txt", "/sub"]))
    assert [d.source for d in documents] == ["corpus/keep.md", "corpus/x/sub/kept.md"] and skipped == []


def test_excluded_paths_are_passed_over(tmp_path: Path):
    (tmp_path / "doc.txt").write_text("Text.")
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "manifest.json").write_text("{}")
    documents, skipped = read(tmp_path, exclude=(tmp_path / "idx",))
    assert [Path(d.source).name for d in documents] == ["doc.txt"] and skipped == []


def test_files_that_yield_nothing_are_listed(tmp_path: Path):
    (tmp_path / "ok.txt").write_text("Fine.")
    (tmp_path / "empty.md").write_text("\n  \n")
    (tmp_path / "bin.txt").write_bytes(b"abc\x00def")
    (tmp_path / "bin.jsonl").write_bytes(b'{"text": "a\x00"}\n')
    (tmp_path / "blank.json").write_text(" \n")
    (tmp_path / "no-text.jsonl").write_text('{"text": ""}\n\n')
    (tmp_path / "script.html").write_text("<script>only()</script>")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "missing.txt")
    documents, skipped = read(tmp_path)
    assert [Path(d.source).name for d in documents] == ["ok.txt"]
    reasons = {Path(s.path).name: s.reason for s in skipped}
    assert reasons == {
        "bin.jsonl": "binary (not text)",
        "bin.txt": "binary (not text)",
        "blank.json": "empty",
        "broken.pdf": reasons["broken.pdf"],
        "dangling.txt": "unreadable: No such file or directory",
        "empty.md": "empty",
        "no-text.jsonl": "empty",
        "script.html": "empty",
    }
    assert reasons["broken.pdf"].startswith("unreadable: ")


def test_explicit_unsupported_file_is_listed(tmp_path: Path):
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "tool").write_bytes(b"\x7fELF\x00\x01")
    documents, skipped = read(tmp_path / "image.png", tmp_path / "tool")
    assert documents == []
    assert [s.reason for s in skipped] == ["unsupported type .png", "binary (not text)"]


def test_pdf_pages_and_title(tmp_path: Path):
    (tmp_path / "paper.pdf").write_bytes(pdf_bytes(["Radium glows blue.", "Second page."], title="Glow"))
    (tmp_path / "untitled.pdf").write_bytes(pdf_bytes(["Just text."]))
    paper = read_one(tmp_path / "paper.pdf")
    assert paper.title == "Glow" and paper.text == "Radium glows blue.\n\nSecond page."
    assert read_one(tmp_path / "untitled.pdf").title == "untitled"  # a sentence is not a title


@pytest.mark.parametrize("recorded", [None, "Microsoft Word - manual.docx", "manual.tex", "Untitled"])
def test_a_pdf_without_a_title_of_its_own_is_titled_by_its_first_line(tmp_path: Path, recorded: str | None):
    pages = ["Valgrind User Manual", "Memcheck is a memory error detector."]
    (tmp_path / "manual.pdf").write_bytes(pdf_bytes(pages, title=recorded))
    assert read_one(tmp_path / "manual.pdf").title == "Valgrind User Manual"


def test_a_pdf_whose_pages_each_come_out_as_one_line_is_read(tmp_path: Path):
    """Some PDF writers put no line breaks: each page is one long line, which begins with the page's
    number and recurs in shape. It is body text, not a running header."""
    line = (
        "{n} In {n}898 the element radium was found in pitchblende by the Curies, who worked for years in a "
        "shed in Paris, and the measurements of {n} samples followed over the next decades in many laboratories."
    )
    (tmp_path / "one-line.pdf").write_bytes(pdf_bytes([line.format(n=n) for n in (1, 2, 3)]))
    document = read_one(tmp_path / "one-line.pdf")
    assert document.text.split("\n\n") == [line.format(n=n) for n in (1, 2, 3)]


def test_encrypted_pdf_is_read_only_without_a_user_password(tmp_path: Path):
    from pypdf import PdfReader, PdfWriter

    (tmp_path / "plain.pdf").write_bytes(pdf_bytes(["Secret text."]))
    for name, user_password in [("locked.pdf", "secret"), ("owner-only.pdf", "")]:
        writer = PdfWriter(clone_from=PdfReader(tmp_path / "plain.pdf"))
        writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
        writer.write(tmp_path / name)
    documents, skipped = read(tmp_path / "locked.pdf", tmp_path / "owner-only.pdf")
    assert [d.text for d in documents] == ["Secret text."]
    locked = (tmp_path / "locked.pdf").resolve().as_posix()
    assert skipped == [SkippedFile("locked.pdf", "unreadable: encrypted PDF needs a password", locked)]


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "bad.jsonl",
            '{"text": "ok"}\n\n{"text": oops}\n',
            "line 3: invalid JSON (Expecting value: column 10); fix the line",
        ),
        ("notext.jsonl", '{"text": "ok"}\n{"title": "x"}\n', 'line 2: record has no "text" field; add one'),
        ("scalar.jsonl", '{"text": "ok"}\n"just a string"\n', "line 2: a record must be a JSON object"),
        ("number.json", '[{"text": "ok"}, {"text": 5}]', 'item 1: "text" must be a string'),
        ("item.json", '{"rows": [{"text": "ok"}, 3]}', "item 1: a record must be a JSON object"),
        ("latin.jsonl", b'{"text": "ok"}\n{"text": "caf\xe9"}\n', "line 2: not UTF-8 text; save the file as UTF-8"),
        ("deep.jsonl", '{"text": "ok"}\n' + "[" * 100_000 + "\n", "line 2: JSON nested too deeply to read"),
    ],
)
def test_malformed_records_are_skipped_naming_file_and_line(
    tmp_path: Path, name: str, content: str | bytes, expected: str
):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    documents, skipped = read(path)
    assert [d.text for d in documents] == ["ok"]
    [item] = skipped
    assert item.path == name and item.reason.startswith(expected) and "\n" not in str(item)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "bad.json",
            '[{"text": "ok"},\n {"text": }]',
            "line 2: invalid JSON (Expecting value: column 11); fix the file",
        ),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "JSON nested too deeply to read"),
        ("latin.json", b'[{"text": "caf\xe9"}]', "line 1: not UTF-8 text"),
    ],
)
def test_unreadable_json_files_are_skipped(tmp_path: Path, name: str, content: str | bytes, expected: str):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    documents, skipped = read(path)
    assert documents == [] and len(skipped) == 1 and skipped[0].reason.startswith(expected)


def test_jsonl_is_streamed(tmp_path: Path):
    path = tmp_path / "stream.jsonl"
    path.write_text('{"id": "first", "text": "Fine."}\n{broken\n')
    skipped: list[SkippedFile] = []
    documents = iter_documents([path], skipped)
    assert next(documents).doc_id == "first" and skipped == []
    assert list(documents) == [] and [s.reason[:7] for s in skipped] == ["line 2:"]


def test_what_is_not_a_readable_text_file_is_skipped_and_named(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "good.md").write_text("# Good\n\nFine text.")
    (corpus / "report.docx").write_bytes(b"PK\x03\x04 zipped word")
    (corpus / "logs.gz").write_bytes(b"\x1f\x8b\x08 gzip")
    noise = random.Random(7).randbytes(20_000).replace(b"\x00", b"\x01")
    (corpus / "noise.txt").write_bytes(noise)
    os.mkfifo(corpus / "pipe.txt")
    (corpus / "loop-a.txt").symlink_to(corpus / "loop-b.txt")
    (corpus / "loop-b.txt").symlink_to(corpus / "loop-a.txt")
    documents, skipped = read(corpus)
    assert [d.source for d in documents] == ["corpus/good.md"]
    assert {s.path: s.reason for s in skipped} == {
        "corpus/logs.gz": "unreadable: not a valid gzip file (Compressed file ended before the end-of-stream "
        "marker was reached); test it with `gzip -t` or exclude it",
        "corpus/loop-a.txt": "unreadable: symbolic link loop",
        "corpus/loop-b.txt": "unreadable: symbolic link loop",
        "corpus/noise.txt": "binary (not text)",
        "corpus/pipe.txt": "not a regular file (FIFO)",
        "corpus/report.docx": "unreadable: not a Word document (.docx); convert it or exclude it",
    }
    alone, skipped = read(corpus / "pipe.txt")
    assert alone == [] and skipped[0].reason == "not a regular file (FIFO)"


def test_missing_source_is_a_corpus_error(tmp_path: Path):
    with pytest.raises(CorpusError, match=r"nope: no such file or folder; check the path$"):
        read(tmp_path / "nope")


@pytest.mark.skipif(not BENCH_DATA.exists(), reason="shared bench-data not present")
def test_shared_corpora_read_as_they_are():
    musique, skipped = read(BENCH_DATA / "musique" / "corpus.jsonl")
    assert len(musique) == 3141 and skipped == []
    assert musique[0].doc_id == "m00000" and musique[0].title == "Port Blair" and musique[0].metadata == {}
    assert len({d.doc_id for d in musique}) == 3141
    scifact, skipped = read(BENCH_DATA / "scifact" / "corpus.jsonl")
    assert len(scifact) == 5183 and skipped == [] and len({d.doc_id for d in scifact}) == 5183
    assert scifact[0].doc_id == "4983" and scifact[0].title.startswith("Microstructural") and scifact[0].metadata == {}


@pytest.mark.parametrize("depth", [300, 400])
def test_html_nested_hundreds_deep_is_read(tmp_path: Path, depth: int):
    """libxml2 cuts a page at 256 levels unless told otherwise: the text below was lost as "empty"."""
    (tmp_path / "deep.html").write_text(
        "<html><body>" + "<div>" * depth + "<p>Deep text about radium.</p>" + "</div>" * depth + "</body></html>"
    )
    assert read_one(tmp_path / "deep.html").text == "Deep text about radium."


def test_html_too_deep_or_with_a_huge_heading_is_skipped_with_the_true_reason(tmp_path: Path):
    from arag_mcp.indexer.sources.html import MAX_DEPTH, MAX_TEXT_NODE_CHARS

    depth = MAX_DEPTH + 1
    (tmp_path / "deeper.html").write_text("<div>" * depth + "<p>Too deep.</p>" + "</div>" * depth)
    (tmp_path / "heading.html").write_text(f"<h1>{'x' * (MAX_TEXT_NODE_CHARS + 1)}</h1><p>Body text.</p>")
    (tmp_path / "long.html").write_text(f"<h1>{'x' * 1_000_000}</h1><p>Body text after a long heading.</p>")
    documents, skipped = read(tmp_path)
    assert [d.text[-31:] for d in documents] == ["Body text after a long heading."]
    assert {Path(s.path).name: s.reason for s in skipped} == {
        "deeper.html": f"unreadable: elements nested more than {MAX_DEPTH} deep; flatten the page or exclude it",
        "heading.html": f"unreadable: one element holds {MAX_TEXT_NODE_CHARS + 1:,} characters of text, more than "
        f"the {MAX_TEXT_NODE_CHARS:,} an HTML page may; split the page or exclude it",
    }
