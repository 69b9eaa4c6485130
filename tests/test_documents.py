"""Real documents: HTML main content, heading paths, PDF pages and DOCX, read and served."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import docx
import index_dump
import numpy as np
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.sources.document import Document
from arag_mcp.indexer.sources.files import iter_documents
from arag_mcp.indexer.sources.outline import heading_path
from arag_mcp.indexer.sources.pdf import join_hyphenated
from arag_mcp.indexer.text.context import chunk_context_terms, embedding_text
from arag_mcp.server.app import create_server
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from .conftest import FIXTURES, live_index

pytestmark = pytest.mark.anyio
DOCUMENTS = FIXTURES / "documents"
PDF_PAGES = [
    ["Contents", "Introduction .......... 2", "Gear ratios . . . . . . . . 3", "The manual starts here."],
    ["Sprockets are an inter-", "national standard. Our state-of-", "the-art sprocket fits every gear."],
    ["A well-known rule: keep the well-", "known ratio. Ratios above two need a stronger chain."],
]


def read_one(path: Path) -> Document:
    skipped = []
    [document] = list(iter_documents([path], skipped))
    assert skipped == []
    return document


def path_at(document: Document, passage: str) -> tuple[str, ...]:
    return heading_path(document.headings, document.text.index(passage))


def write_pdf(path: Path) -> None:
    """Three pages under a running header ("ACME Sprocket Manual") and a page-number footer."""
    page = canvas.Canvas(str(path), pagesize=A4)
    page.setTitle("Sprocket Manual")
    for number, lines in enumerate(PDF_PAGES, 1):
        page.drawString(72, 800, "ACME Sprocket Manual")
        for at, line in enumerate(lines):
            page.drawString(72, 740 - 16 * at, line)
        page.drawString(290, 40, f"Page {number}")
        page.showPage()
    page.save()


def write_docx(path: Path) -> None:
    document = docx.Document()
    document.add_heading("Gear Handbook", level=0)
    document.add_heading("Choosing gears", level=1)
    document.add_paragraph("Pick the gear whose ratio matches the load.")
    document.add_heading("Small loads", level=2)
    document.add_paragraph("Small loads run on a ratio of one.")
    table = document.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, [("Load", "Ratio"), ("small", "1.0")]):
        for cell, value in zip(row.cells, cells):
            cell.text = value
    document.add_heading("Maintenance", level=1)
    document.add_paragraph("Oil the gears every month.")
    document.save(str(path))


def test_html_keeps_the_main_content_and_its_structure():
    page = read_one(DOCUMENTS / "guide.html")
    assert page.title == "Widget Guide | Example Docs"
    for navigation in ("Punycode", "Zlib", "Assertion testing", "Example Docs v1.2", "Copyright", "analytics"):
        assert navigation not in page.text
    assert "copy" not in page.text.split() and "#" not in page.text
    assert page.text.count("On Windows") == 2  # the heading and the paragraph, not the table of contents
    assert page.text.startswith("Widget Guide\n\nWidgets turn sprockets into gears.")
    assert '    if (!widget.driver) {\n        throw new Error("no sprocket driver");\n    }' in page.text
    assert "Setting | Default\nratio | 1.5" in page.text
    assert path_at(page, "Widgets turn") == ("Widget Guide",)
    assert path_at(page, "On Windows the installer") == ("Widget Guide", "Installing", "On Windows")
    assert path_at(page, "function install") == ("Widget Guide", "Installing", "On Windows")
    assert path_at(page, "The configuration file") == ("Widget Guide", "Configuring")


DOCBOOK_PAGE = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter 2. Packages</title></head><body>
<div class="navheader"><table summary="Navigation header"><tr><th>Chapter 2. Packages</th></tr>
<tr><td><a href="ch01.html">Prev</a></td><td><a href="ch03.html">Next</a></td></tr></table><hr/></div>
<div class="chapter"><div class="titlepage"><div><div><h1 class="title"><a id="c2"/>Chapter 2. Packages</h1>
</div></div></div>
<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc"><dt><span class="section">
<a href="#s1">2.1. Downgrading</a></span></dt></dl></div>
<p>Packages come from the archive.</p>
<div class="section"><div class="titlepage"><div><div><h2 class="title"><a id="s1"/>2.1. Downgrading</h2>
</div></div></div>
<div class="note"><table border="0" summary="Note"><tr><td rowspan="2"><img alt="[Note]" src="note.png"/></td>
<th align="left">Note</th></tr><tr><td><p>Downgrading is not supported.</p></td></tr></table></div>
<p>Change the owner: <code class="literal">sudo chown <em class="replaceable"><code>my_name</code></em>
<em class="replaceable"><code>some_file</code></em></code> runs as root.</p>
<p>Avoid many "<code class="literal">dpkg -i <span class="emphasis"><em>broken-package</em></span>_<span
class="emphasis"><em>old-version</em></span>.deb</code>" commands.</p>
<div class="section"><div class="titlepage"><div><div><h3 class="title"><a id="s11"/>2.1.1. Pinning</h3>
</div></div></div>
<p>Set the "<code class="literal">/etc/apt/preferences</code>" file as the following.</p>
<pre class="screen">Package: *
Pin: release a=testing
Pin-Priority: 500</pre>
<div class="tip"><h3 class="title">Tip</h3><p>Pin with care.</p></div><p>After the tip.</p>
<div class="variablelist"><dl class="variablelist"><dt><span class="term"><code class="literal">scram-sha-256</code></span>
</dt><dd><p>Perform SCRAM authentication.</p><p>The most secure method.</p></dd></dl></div>
<div class="itemizedlist"><ul class="itemizedlist"><li class="listitem"><p>one <b>bold</b>word</p></li>
<li class="listitem"><p>two</p></li></ul></div>
</div></div></div>
<div class="navfooter"><hr/><table summary="Navigation footer"><tr><td><a href="ch01.html">Prev</a></td>
<td><a href="index.html">Home</a></td></tr></table></div>
</body></html>"""


def test_docbook_page_sections_and_inline_text(tmp_path: Path):
    (tmp_path / "ch02.html").write_text(DOCBOOK_PAGE)
    page = read_one(tmp_path / "ch02.html")
    for navigation in ("Prev", "Next", "Home", "Table of Contents"):
        assert navigation not in page.text
    assert page.text.startswith("Chapter 2. Packages\n\nPackages come from the archive.\n\n2.1. Downgrading")
    assert page.text.count("2.1. Downgrading") == 1  # the heading, not the table of contents
    assert "Note\nDowngrading is not supported." in page.text
    assert "Change the owner: sudo chown my_name some_file runs as root." in page.text
    assert 'Avoid many "dpkg -i broken-package_old-version.deb" commands.' in page.text
    assert "Package: *\nPin: release a=testing\nPin-Priority: 500" in page.text
    assert "- scram-sha-256\n\n- Perform SCRAM authentication.\n\nThe most secure method." in page.text
    assert "- one boldword\n- two" in page.text  # no space where the source has none
    assert path_at(page, "Packages come") == ("Chapter 2. Packages",)
    assert path_at(page, "Downgrading is not") == ("Chapter 2. Packages", "2.1. Downgrading")
    assert path_at(page, "Change the owner") == ("Chapter 2. Packages", "2.1. Downgrading")
    assert path_at(page, "Pin-Priority") == ("Chapter 2. Packages", "2.1. Downgrading", "2.1.1. Pinning")
    assert "Tip\n\nPin with care." in page.text
    assert path_at(page, "After the tip.") == ("Chapter 2. Packages", "2.1. Downgrading", "2.1.1. Pinning")
    assert path_at(page, "The most secure") == ("Chapter 2. Packages", "2.1. Downgrading", "2.1.1. Pinning")


SPHINX_PAGE = """<html><head><title>Gears — Manual 1.0 documentation</title></head><body>
<div class="related" role="navigation"><ul><li><a href="index.html">Manual 1.0</a></li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
<section id="gears"><h1>Gears<a class="headerlink" href="#gears">¶</a></h1><p>Gears turn.</p>
<section id="ratios"><h2>Ratios<a class="headerlink" href="#ratios">¶</a></h2><p>Use <code class="docutils literal
notranslate"><span class="pre">ratio()</span></code> to read one.</p></section></section></div></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Navigation</h3><ul><li><a href="a.html">Sprockets</a></li></ul></div>
</div><div class="footer">&#169; Copyright 2024.</div></body></html>"""
JAVADOC_PAGE = """<html><head><title>Gear (Machines API)</title></head><body class="class-declaration-page">
<header role="banner"><nav role="navigation"><ul><li><a href="package-summary.html">Package</a></li></ul></nav></header>
<div class="flex-content"><main role="main"><div class="header"><h1 title="Class Gear" class="title">Class Gear</h1></div>
<section class="class-description"><div class="block">A toothed wheel.</div></section>
<section class="method-details"><h2>Method Details</h2><ul class="member-list"><li><section class="detail">
<h3>ratio</h3><div class="member-signature"><span class="return-type">double</span>&nbsp;<span
class="element-name">ratio</span>()</div><div class="block">The ratio of <code>this</code> gear.</div></section></li>
</ul></section></main><footer role="contentinfo"><p>Copyright 2024</p></footer></div></body></html>"""


@pytest.mark.parametrize(
    "markup, text, paths",
    [
        (
            SPHINX_PAGE,
            "Gears\n\nGears turn.\n\nRatios\n\nUse ratio() to read one.",
            {"Gears turn.": ("Gears",), "Use ratio()": ("Gears", "Ratios")},
        ),
        (
            JAVADOC_PAGE,
            "Class Gear\n\nA toothed wheel.\n\nMethod Details\n\nratio\n\n- double ratio()\n\nThe ratio of this gear.",
            {"A toothed wheel.": ("Class Gear",), "double ratio()": ("Class Gear", "Method Details", "ratio")},
        ),
    ],
    ids=["sphinx", "javadoc"],
)
def test_documentation_generators_sections(tmp_path: Path, markup: str, text: str, paths: dict):
    (tmp_path / "page.html").write_text(markup)
    page = read_one(tmp_path / "page.html")
    assert page.text == text  # navigation, sidebars, footers and permalink marks left out
    for passage, path in paths.items():
        assert path_at(page, passage) == path


def test_inline_elements_keep_the_spaces_around_them(tmp_path: Path):
    (tmp_path / "page.html").write_text(
        "<html><head><title>Inline</title></head><body><main><h1>Inline</h1>"
        "<p>Run <code>make</code> then <a href='#'>read</a>\n<span>the</span> <tt>log</tt>.</p>"
        "<p><b>foo</b>bar and <i>x</i>, <i>y</i></p><pre>Structure <a>Match</a><br/>struct _Match {\n  int  n;</pre>"
        "</main></body></html>"
    )
    page = read_one(tmp_path / "page.html")
    assert page.text == (
        "Inline\n\nRun make then read the log.\n\nfoobar and x, y\n\nStructure Match\nstruct _Match {\n  int  n;"
    )


def test_plain_page_keeps_trafilaturas_blocks_as_the_page_shows_them(tmp_path: Path):
    sentences = " ".join(f"Sentence {n} explains how sprockets mesh with gear number {n}." for n in range(25))
    menu = "".join(f"<li><a href='p{n}.html'>Page {n}</a></li>" for n in range(20))
    (tmp_path / "plain.html").write_text(
        f"<html><head><title>Plain</title></head><body><div class='sidebar'><ul>{menu}</ul></div>"
        f"<div class='content'><h1>Sprockets</h1><p>{sentences}</p><h2>Calling</h2><p>Call <strong>void</strong>"
        " <strong>sha256_init</strong> (<var>ctx</var>) first, then <code>dpkg -i <em>broken-package</em>_<em>"
        f"old-version</em>.deb</code> as needed. {sentences.replace('Sentence', 'Line')}</p></div>"
        "<div class='footer'><a href='a'>About</a> | <a href='b'>Contact</a></div></body></html>"
    )
    page = read_one(tmp_path / "plain.html")
    assert "Page 3" not in page.text and "Contact" not in page.text  # trafilatura's boilerplate left out
    assert "Call void sha256_init (ctx) first, then dpkg -i broken-package_old-version.deb as needed." in page.text
    assert path_at(page, "Sentence 0") == ("Sprockets",)
    assert path_at(page, "Call void") == ("Sprockets", "Calling")


def test_xhtml_with_an_xml_declaration_is_read(tmp_path: Path):
    (tmp_path / "page.xhtml.html").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head>'
        "<body><p>Declared pages are read too.</p></body></html>"
    )
    page = read_one(tmp_path / "page.xhtml.html")
    assert page.title == "X" and page.text == "Declared pages are read too."


def test_markdown_headings_and_front_matter():
    guide = read_one(DOCUMENTS / "guide.md")
    assert guide.title == "Sprocket Handbook"
    assert guide.metadata == {"tags": '["sprockets", "gears"]', "version": 3}
    assert "tags:" not in guide.text and guide.text.lstrip().startswith("Sprocket Handbook\n=====")
    assert [path for _, path in guide.headings] == [
        ("Sprocket Handbook",),
        ("Sprocket Handbook", "Installing"),
        ("Sprocket Handbook", "Installing", "On Windows"),
        ("Sprocket Handbook", "Configuring"),
    ]
    assert path_at(guide, "An introduction") == ("Sprocket Handbook",)
    assert path_at(guide, "sprocket --version") == ("Sprocket Handbook", "Installing", "On Windows")
    assert path_at(guide, "The ratio is set") == ("Sprocket Handbook", "Configuring")


def test_front_matter_dates_and_other_yaml_types_become_text(tmp_path: Path):
    (tmp_path / "post.md").write_text(
        "---\ntitle: Post\ndate: 2024-01-01\nupdated: 2024-02-03 10:20:30\ntags: [a, 2024-05-06]\n"
        "by_day: {2024-01-01: launch, 7: week}\nseen: !!set {x, y}\n---\nThe post has a body.\n"
    )
    post = read_one(tmp_path / "post.md")
    assert post.metadata == {
        "date": "2024-01-01",
        "updated": "2024-02-03T10:20:30",
        "tags": '["a", "2024-05-06"]',
        "by_day": '{"2024-01-01": "launch", "7": "week"}',
        "seen": '["x", "y"]',
    }
    assert post.text.strip() == "The post has a body."


def test_restructuredtext_levels_follow_the_order_of_adornments(tmp_path: Path):
    (tmp_path / "a.rst").write_text(
        "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\nSteps.\n\nWindows\n~~~~~~~\n\nMSI.\n\nUse\n---\n\nRun.\n"
    )
    guide = read_one(tmp_path / "a.rst")
    assert guide.title == "Guide"
    assert path_at(guide, "MSI.") == ("Guide", "Install", "Windows")
    assert path_at(guide, "Run.") == ("Guide", "Use")


def test_pdf_pages_without_running_headers_or_contents_lines(tmp_path: Path):
    write_pdf(tmp_path / "manual.pdf")
    manual = read_one(tmp_path / "manual.pdf")
    assert manual.title == "Sprocket Manual"
    assert "ACME" not in manual.text and "Page " not in manual.text
    assert "Introduction" not in manual.text and "Gear ratios" not in manual.text
    assert "Contents" in manual.text and "The manual starts here." in manual.text
    assert "an international standard" in manual.text.replace("\n", " ")
    assert "state-of-the-art sprocket" in manual.text
    assert "keep the well-known ratio" in manual.text.replace("\n", " ")
    starts = dict(manual.pages)
    assert sorted(starts.values()) == [1, 2, 3]
    assert manual.text.index("Sprockets are") == next(o for o, page in manual.pages if page == 2)


def test_pdf_running_headers_with_the_page_number_are_dropped(tmp_path: Path):
    chapters = ["Chapter 1: Sprockets", "Chapter 1: Sprockets", "Chapter 2: Gears", "Chapter 2: Gears"]
    bodies = [
        ["Sprockets carry teeth.", "Each tooth meets a chain link.", "Count them in groups of 12"],
        ["Teeth wear with use.", "Replace them after 400 hours", "8 A footnote numbered as its page"],
        ["Gears mesh in pairs.", "Ratios run from 1 to 9", "A pair sets the ratio."],  # 9: this page's number
        ["Oil keeps gears quiet.", "Dry gears whine.", "Oil them every 30 days"],
    ]
    page = canvas.Canvas(str(tmp_path / "manual.pdf"), pagesize=A4)
    for index, (chapter, lines) in enumerate(zip(chapters, bodies)):
        page.drawString(72, 800, f"{chapter} {index + 7}")  # printed numbers start at 7
        for at, line in enumerate(lines):
            page.drawString(72, 740 - 16 * at, line)
        page.showPage()
    page.save()
    manual = read_one(tmp_path / "manual.pdf")
    assert "Chapter" not in manual.text
    assert all(line in manual.text for lines in bodies for line in lines)


def test_hyphens_join_split_words_and_keep_compounds():
    words = Counter({"well-known": 1, "international": 0})
    assert join_hyphenated("inter-\nnational", words) == "international"
    assert join_hyphenated("state-of-\nthe-art", words) == "state-of-the-art"
    assert join_hyphenated("the well-\nknown", words) == "the well-known"
    assert join_hyphenated("COVID-\n19 and Anglo-\nSaxon", words) == "COVID-\n19 and Anglo-\nSaxon"


def test_docx_paragraphs_tables_and_headings(tmp_path: Path):
    write_docx(tmp_path / "gears.docx")
    gears = read_one(tmp_path / "gears.docx")
    assert gears.title == "Gear Handbook"
    assert "Load | Ratio\nsmall | 1.0" in gears.text
    assert path_at(gears, "Pick the gear") == ("Gear Handbook", "Choosing gears")
    assert path_at(gears, "small | 1.0") == ("Gear Handbook", "Choosing gears", "Small loads")
    assert path_at(gears, "Oil the gears") == ("Gear Handbook", "Maintenance")


@pytest.fixture(scope="module")
def documents_index(tmp_path_factory) -> Path:
    corpus = tmp_path_factory.mktemp("documents") / "docs"
    corpus.mkdir()
    shutil.copy(DOCUMENTS / "guide.html", corpus)
    shutil.copy(DOCUMENTS / "guide.md", corpus)
    write_pdf(corpus / "manual.pdf")
    write_docx(corpus / "gears.docx")
    index = corpus.parent / "idx"
    Index(str(index)).add([corpus], BuildOptions(chunk_tokens=24, progress=False))
    return index


def test_chunks_carry_their_heading_path_and_pages(documents_index: Path):
    chunks = index_dump.all_chunks(open_index(str(documents_index)))
    by_source = {}
    for chunk in chunks:
        by_source.setdefault(chunk.source, []).append(chunk)
    manual = sorted(by_source["docs/manual.pdf"], key=lambda chunk: chunk.part)
    assert len(manual) > 2 and manual[0].pages[0] == 1 and manual[-1].pages[1] == 3
    assert all(chunk.heading_path == () for chunk in manual)
    assert any(chunk.pages[0] < chunk.pages[1] for chunk in manual) or len({c.pages for c in manual}) == 3
    for chunk in by_source["docs/guide.md"]:
        assert chunk.pages is None and chunk.heading_path[0] == "Sprocket Handbook"
    windows = next(chunk for chunk in by_source["docs/guide.html"] if "MSI file" in chunk.text)
    assert windows.heading_path == ("Widget Guide", "Installing", "On Windows")


def test_each_sentence_is_embedded_under_its_own_headings(documents_index: Path, embedder):
    snapshot = open_index(str(documents_index))
    guide = sorted((c for c in index_dump.all_chunks(snapshot) if c.source == "docs/guide.md"), key=lambda c: c.part)
    terms = dict(zip((c.chunk_id for c in guide), chunk_context_terms([c.text for c in guide])))
    sentences = snapshot.sentences.table.to_pandas()
    for passage, section in [
        ("Install the sprocket with", ["Installing"]),
        ("The ratio is set", ["Configuring"]),
    ]:
        row = sentences[sentences["text"].str.startswith(passage)].iloc[0]
        expected = embedding_text(
            "Sprocket Handbook", ["Sprocket Handbook", *section], terms[row["chunk_id"]], row["text"]
        )
        assert np.allclose(row["vector"], embedder.encode_documents([expected])[0], atol=1e-4)


async def test_results_and_chunk_read_show_section_and_pages(documents_index: Path):
    with live_index(documents_index) as live:
        async with Client(create_server(live, PROFILES["arag"])) as client:
            found = await client.call_tool("keyword_search", {"keywords": ["MSI file"], "top_k": 1})
            [hit] = found.structured_content["results"]
            assert hit["title"] == "Widget Guide | Example Docs"  # begins with its first heading: left out of section
            assert hit["section"] == "Installing › On Windows" and hit.get("pages") is None
            assert "| section: Installing › On Windows |" in found.content[0].text

            found = await client.call_tool("keyword_search", {"keywords": ["stronger chain"], "top_k": 1})
            [hit] = found.structured_content["results"]
            assert hit["pages"] == "3" and hit.get("section") is None
            assert "| pages: 3 |" in found.content[0].text

            semantic = await client.call_tool("semantic_search", {"query": "Oil the gears every month", "top_k": 1})
            [best] = semantic.structured_content["results"]
            assert best["title"] == "Gear Handbook" and best["section"]  # its headings below the title
            assert not best["section"].startswith("Gear Handbook")
            assert f"| section: {best['section']} |" in semantic.content[0].text

            read = await client.call_tool("chunk_read", {"chunk_ids": [hit["chunk_id"]]})
            [chunk] = read.structured_content["chunks"]
            assert chunk["pages"] == "3" and "| pages: 3 |" in read.content[0].text
        async with Client(create_server(live, PROFILES["agentic"])) as client:
            found = await client.call_tool("search", {"queries": ["a ratio of one for small loads"], "top_k": 1})
            [hit] = found.structured_content["results"]
            assert hit["file_type"] == "docx" and hit["title"] == "Gear Handbook", hit
            assert "section" not in hit and "| section:" not in found.content[0].text  # under the title alone
