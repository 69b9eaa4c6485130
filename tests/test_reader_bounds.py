"""Small files that would inflate to gigabytes (YAML alias bombs, zip bombs, Flate bombs), files
over a reader's absolute bounds and files over the time or memory a file may take are skipped with
one line naming the file and the bound, and the build goes on in bounded memory; a bad record or a
bad front-matter value costs only itself."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from arag_mcp.indexer.sources.archive_limits import (
    ARCHIVE_LIMIT,
    MEMBER_LIMIT,
    RATIO_FLOOR,
    RATIO_LIMIT,
    XML_PART_LIMIT,
    check_zip,
)
from arag_mcp.indexer.sources.budget import BudgetedReader, FileBudget
from arag_mcp.indexer.sources.document import Document, SkippedFile
from arag_mcp.indexer.sources.files import Source, iter_documents, list_files
from arag_mcp.indexer.sources.headings import ALIAS_GROWTH_LIMIT, FRONT_MATTER_LIMIT
from arag_mcp.indexer.sources.html import MAX_ELEMENTS, MAX_PAGE_CHARS
from arag_mcp.indexer.sources.outline import NotReadable
from arag_mcp.indexer.sources.records import MAX_NESTING

from .bad_files import (
    bad_front_matter,
    deep_jsonl,
    dense_docx,
    html_markup,
    huge_int_json,
    long_front_matter,
    many_sections,
)
from .bombs import (
    DOCUMENT_XML,
    MB,
    docx_bomb,
    docx_without_document,
    pdf_flate_bomb,
    understated_docx,
    yaml_alias_bomb,
)
from .conftest import run_cli

NORMAL = "# Radium\n\nRadium glows blue in the dark.\n"
CHILD_ADDRESS_SPACE = 6 << 30
"""The address space a build in a child process may map: a normal build needs between 2 and 3 GB
(torch and ONNX Runtime reserve more than they use); a regression fails here instead of taking
the machine's memory."""
MEMORY_MARGIN = 256 * MB
"""How much more than a build of the normal file alone the build with the bombs may hold."""


def read(folder: Path) -> tuple[list[Document], dict[str, str]]:
    skipped: list[SkippedFile] = []
    documents = list(iter_documents([folder], skipped))
    return documents, {Path(item.path).name: item.reason for item in skipped}


def test_front_matter_that_reuses_blocks_is_read(tmp_path: Path):
    (tmp_path / "deploy.md").write_text(
        "---\ntitle: Deploy\nbase: &base {owner: ops, tier: 2}\nprod:\n  <<: *base\n  tier: 1\nstage: *base\n---\nText.\n"
    )
    documents, skipped = read(tmp_path)
    assert skipped == {}
    assert documents[0].title == "Deploy"
    assert documents[0].metadata == {
        "base": '{"owner": "ops", "tier": 2}',
        "prod": '{"owner": "ops", "tier": 1}',
        "stage": '{"owner": "ops", "tier": 2}',
    }


def test_front_matter_that_aliases_blow_up_is_skipped(tmp_path: Path):
    (tmp_path / "laughs.md").write_text(yaml_alias_bomb(levels=6))  # 9**6 "lol": a few MB, over the limit
    (tmp_path / "loop.md").write_text("---\nitems: &items [one, *items]\n---\nText.\n")
    (tmp_path / "deep.md").write_text("---\nitems: " + "[" * 5000 + "]" * 5000 + "\n---\nText.\n")
    (tmp_path / "normal.md").write_text(NORMAL)
    documents, skipped = read(tmp_path)
    assert [document.title for document in documents] == ["Radium"]
    assert skipped == {
        "laughs.md": "unreadable: front matter aliases (*name) expand it by 2,466,171 nodes and characters "
        f"(limit {ALIAS_GROWTH_LIMIT:,}); write the values out or remove the aliases",
        "loop.md": "unreadable: front matter contains itself through an alias (*name); remove the alias",
        "deep.md": "unreadable: front matter nested too deeply to read; flatten it or remove it",
    }


def test_docx_that_would_inflate_past_the_limits_is_skipped(tmp_path: Path):
    docx_bomb(tmp_path / "ratio.docx", 20 * MB)
    docx_bomb(tmp_path / "large.docx", MEMBER_LIMIT + MB)
    understated_docx(tmp_path / "understated.docx", 20 * MB)
    with docx_without_document(tmp_path / "bzip2.docx") as package:
        package.writestr(DOCUMENT_XML, "<w:document/>", compress_type=zipfile.ZIP_BZIP2)
    with docx_without_document(tmp_path / "many.docx") as package:
        for number in range(ARCHIVE_LIMIT // RATIO_FLOOR + 1):
            package.writestr(f"word/media/blank{number}.bin", bytes(RATIO_FLOOR), compresslevel=1)
    (tmp_path / "normal.md").write_text(NORMAL)
    with zipfile.ZipFile(tmp_path / "understated.docx") as package:
        declared = package.getinfo(DOCUMENT_XML).file_size
    documents, skipped = read(tmp_path)
    assert [document.title for document in documents] == ["Radium"]
    fix = "exclude the file, or split it if it is a genuine document"
    assert skipped == {
        "ratio.docx": f"unreadable: {DOCUMENT_XML} would inflate to 20 MB, 1,000 times its compressed size "
        f"(limit {RATIO_LIMIT} times); {fix}",
        "large.docx": f"unreadable: {DOCUMENT_XML} would inflate to 257 MB (limit 256 MB); {fix}",
        "understated.docx": f"unreadable: {DOCUMENT_XML} holds more than the {declared:,} bytes its header declares; {fix}",
        "bzip2.docx": f"unreadable: {DOCUMENT_XML} uses compression method 12, not deflate; {fix}",
        "many.docx": f"unreadable: its parts would inflate to 1.0 GB (limit 1.0 GB); {fix}",
    }


def test_a_long_real_document_is_within_the_limits(tmp_path: Path):
    """15 MB of Word XML for paragraphs of varied words (a thousand pages) deflates about 7 times."""
    words = [f"{stem}{ending}" for stem in ("radi", "glow", "measur", "element", "curie") for ending in "aeiouy"]
    chooser = random.Random(7)
    paragraphs = [
        f'<w:p><w:r><w:t xml:space="preserve">{" ".join(chooser.choices(words, k=40))}</w:t></w:r></w:p>'
        for _ in range(5000)
    ]
    body = "".join(chooser.choices(paragraphs, k=50_000))
    with docx_without_document(tmp_path / "long.docx") as package:
        package.writestr(DOCUMENT_XML, f"<w:document><w:body>{body}</w:body></w:document>", compresslevel=6)
    with zipfile.ZipFile(tmp_path / "long.docx") as package:
        assert 12 * MB < package.getinfo(DOCUMENT_XML).file_size < XML_PART_LIMIT
    check_zip(tmp_path / "long.docx")


def test_docx_of_dense_xml_within_the_ratio_is_skipped_past_the_xml_limit(tmp_path: Path):
    dense_docx(tmp_path / "dense.docx", XML_PART_LIMIT + MB)
    with zipfile.ZipFile(tmp_path / "dense.docx") as package:
        info = package.getinfo(DOCUMENT_XML)
    assert info.file_size / info.compress_size < RATIO_LIMIT
    with pytest.raises(NotReadable) as refused:
        check_zip(tmp_path / "dense.docx")
    assert str(refused.value) == (
        f"{DOCUMENT_XML} holds 21 MB of XML (limit 20 MB); exclude the file, or split it if it is a genuine document"
    )


def test_a_bad_record_is_skipped_and_the_others_of_its_file_are_read(tmp_path: Path):
    deep_jsonl(tmp_path / "deep.jsonl", 600)
    huge_int_json(tmp_path / "digits.json")
    documents, skipped = read(tmp_path)
    assert [document.title for document in documents] == ["Radium", "Radium again", "Radium", ""]
    assert skipped == {
        "deep.jsonl": f"line 2: record nested more than {MAX_NESTING} levels deep; flatten it or remove it"
    }
    assert documents[3].metadata == {"count": "7" * 5000}


def test_front_matter_that_cannot_become_metadata_is_kept_as_text(tmp_path: Path):
    bad_front_matter(tmp_path)
    long_front_matter(tmp_path / "long.md", FRONT_MATTER_LIMIT)
    long = (tmp_path / "long.md").read_text()
    front_matter_chars = len(long[len("---\n") : long.index("\n---\n")])
    documents, skipped = read(tmp_path)
    assert {Path(document.path).name: document.title for document in documents} == {
        "date.md": "Radium",
        "digits.md": "Radium",
        "long.md": "Radium",
        "tag.md": "Radium",
    }
    assert all(document.text.startswith("---\ntitle: ") and not document.metadata for document in documents)
    fix = "fix the value or quote it"
    assert skipped == {
        "date.md": f"indexed, front matter kept as text: day is out of range for month; {fix}",
        "digits.md": "indexed, front matter kept as text: Exceeds the limit (4300 digits) for integer string "
        f"conversion: value has 5000 digits; {fix}",
        "tag.md": f"indexed, front matter kept as text: invalid literal for int() with base 10: 'abc'; {fix}",
        "long.md": f"indexed, front matter of {front_matter_chars:,} characters kept as text "
        f"(limit {FRONT_MATTER_LIMIT:,}); shorten it or move the data to a file of its own",
    }


def test_html_past_the_page_limits_is_skipped_before_it_is_read(tmp_path: Path):
    html_markup(tmp_path / "elements.html", MAX_ELEMENTS * 13)  # 3 elements in 35 characters
    (tmp_path / "long.html").write_text("<p>" + "radium " * (MAX_PAGE_CHARS // 7) + "</p>")
    (tmp_path / "normal.md").write_text(NORMAL)
    documents, skipped = read(tmp_path)
    assert [document.title for document in documents] == ["Radium"]
    assert skipped == {
        "elements.html": f"unreadable: the page holds more than {MAX_ELEMENTS:,} elements; split the page or exclude it",
        "long.html": f"unreadable: the page holds {MAX_PAGE_CHARS // 7 * 7 + 7:,} characters "
        f"(limit {MAX_PAGE_CHARS:,}); split the page or exclude it",
    }


def read_within(folder: Path, budget: FileBudget) -> tuple[list[Document], dict[str, str]]:
    skipped: list[SkippedFile] = []
    with BudgetedReader(budget) as reader:
        documents = [
            document
            for path, source in list_files([Source.at(folder)], skipped)
            for document in reader.read(path, source, skipped)
        ]
    return documents, {Path(item.path).name: item.reason for item in skipped}


def test_a_file_over_the_time_budget_is_skipped_and_the_next_is_read(tmp_path: Path):
    many_sections(tmp_path / "a-slow.md", 100_000)  # about a second to read
    (tmp_path / "b-normal.md").write_text(NORMAL)
    deep_jsonl(tmp_path / "c-records.jsonl", 600)
    documents, skipped = read_within(tmp_path, FileBudget(seconds=0.1))
    assert [document.title for document in documents] == ["Radium", "Radium", "Radium again"]
    assert skipped == {
        "a-slow.md": "reading it took more than 0.1 s (limit --file-seconds 0.1); raise --file-seconds or exclude the file",
        "c-records.jsonl": f"line 2: record nested more than {MAX_NESTING} levels deep; flatten it or remove it",
    }


def test_a_file_over_the_memory_budget_is_skipped_and_the_next_is_read(tmp_path: Path):
    records = [{"text": f"Record {number} about radium.", "number": number} for number in range(400_000)]
    (tmp_path / "a-large.json").write_text(json.dumps(records))  # 16 MB, a few hundred MB parsed
    (tmp_path / "b-normal.md").write_text(NORMAL)
    documents, skipped = read_within(tmp_path, FileBudget(memory=64 * MB))
    assert [document.title for document in documents] == ["Radium"]
    assert list(skipped) == ["a-large.json"]
    assert "(limit --file-memory 64); raise --file-memory or exclude the file" in skipped["a-large.json"]


def test_pdf_whose_stream_inflates_past_pypdf_limits_is_skipped(tmp_path: Path):
    pdf_flate_bomb(tmp_path / "small.pdf", MB)
    pdf_flate_bomb(tmp_path / "bomb.pdf", 200 * MB)
    documents, skipped = read(tmp_path)
    assert [document.text for document in documents] == ["Flate bomb"]
    assert list(skipped) == ["bomb.pdf"]
    assert skipped["bomb.pdf"].startswith("unreadable: it would inflate past pypdf's safety limits (Limit reached")
    assert skipped["bomb.pdf"].endswith("); exclude the file")


BUILD = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from arag_mcp.indexer.cli import main
try:
    status = main(sys.argv[2:])
finally:
    Path(sys.argv[1]).write_text(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.exit(status)
"""


def build_in_child(corpus: Path, index: Path) -> tuple[subprocess.CompletedProcess, int]:
    """`arag-index build CORPUS` in a child process with bounded address space: (its result, its
    peak resident memory in bytes, as the child itself measures it)."""
    peak = index.with_name(index.name + ".peak")
    script = BUILD.format(limit=CHILD_ADDRESS_SPACE)
    result = subprocess.run(
        [sys.executable, "-c", script, str(peak), "build", str(corpus), "--index", str(index), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    return result, int(peak.read_text()) * 1024 if peak.exists() else 0


@pytest.mark.slow
def test_build_skips_bombs_and_indexes_the_rest_in_bounded_memory(tmp_path: Path, embedder):
    """The model is exported to ONNX beforehand (`embedder`), so that both builds only load it."""
    normal = tmp_path / "normal"
    normal.mkdir()
    (normal / "radium.md").write_text(NORMAL)
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "radium.md").write_text(NORMAL)
    (corpus / "laughs.md").write_text(yaml_alias_bomb())
    docx_bomb(corpus / "bomb.docx", 1024 * MB)
    pdf_flate_bomb(corpus / "bomb.pdf", 1024 * MB)
    assert sum(path.stat().st_size for path in corpus.iterdir()) < 3 * MB

    _, baseline = build_in_child(normal, tmp_path / "normal-index")
    result, peak = build_in_child(corpus, tmp_path / "index")

    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    skips = sorted(line for line in lines if line.startswith("skipped docs/"))
    assert [line.split(":")[0] for line in skips] == [
        "skipped docs/bomb.docx",
        "skipped docs/bomb.pdf",
        "skipped docs/laughs.md",
    ]
    assert f"{DOCUMENT_XML} would inflate to 1.0 GB (limit 256 MB)" in skips[0]
    assert "pypdf's safety limits" in skips[1] and "front matter aliases" in skips[2]
    assert "skipped 3 file(s) or record(s), listed above" in lines
    assert any(line.startswith("added 1, updated 0, removed 0, unchanged 0;") for line in lines), lines
    listed = json.loads(_list(tmp_path / "index"))
    assert [document["source"] for document in listed] == ["docs/radium.md"]
    assert peak < baseline + MEMORY_MARGIN, f"peak {peak / MB:.0f} MB, a normal build {baseline / MB:.0f} MB"


def _list(index: Path) -> str:
    result = run_cli("arag_mcp.indexer", "list", "--index", str(index), "--json")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_files_are_read_in_process_where_the_reader_process_cannot_start(tmp_path: Path):
    """A reader process that cannot start (here its interpreter exits at once) leaves the reading
    to this process, saying so."""
    (tmp_path / "radium.md").write_text(NORMAL)
    script = (
        "import multiprocessing, shutil, sys\n"
        "multiprocessing.set_executable(shutil.which('false'))\n"
        "from arag_mcp.indexer.sources.budget import BudgetedReader\n"
        "from arag_mcp.indexer.sources.files import Source, list_files\n"
        "skipped = []\n"
        "with BudgetedReader() as reader:\n"
        f"    for path, source in list_files([Source.at({str(tmp_path)!r})], skipped):\n"
        "        print(*(document.title for document in reader.read(path, source, skipped)))\n"
    )
    result = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Radium\n"
    assert "files are read in this process, without --file-seconds and --file-memory" in result.stderr
