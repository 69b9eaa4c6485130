"""Text files without a known suffix (README, NEWS, what `--include` names) are read as plain text,
binary content still skipped; compressed files (.gz, .bz2, .xz) are read as the file inside, a
damaged one or one that decompresses past the cap skipped with one line; the watcher syncs what
the build reads."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest
from arag_mcp.indexer.cli import parse_args
from arag_mcp.indexer.commands import build_options
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.sources.budget import BudgetedReader, FileBudget
from arag_mcp.indexer.sources.compressed import DECOMPRESSED_LIMIT
from arag_mcp.indexer.sources.document import Document, SkippedFile
from arag_mcp.indexer.sources.files import Source, iter_documents, list_files
from arag_mcp.indexer.sources.formats import may_read
from arag_mcp.indexer.watch import _filter

from .bombs import MB, compressed_bomb
from .conftest import HASHED_MODEL, run_cli

GUIDE = "# Guide\n\nThe guide explains setup.\n\n## Install\n\nRun the installer.\n"


def read(source: Path | Source) -> tuple[dict[str, Document], dict[str, str]]:
    """Documents and skip reasons, each by its file's name."""
    skipped: list[SkippedFile] = []
    documents = {Path(document.source).name: document for document in iter_documents([source], skipped)}
    return documents, {Path(item.path).name: item.reason for item in skipped}


def test_text_files_without_an_extension_are_read_and_binary_ones_skipped(tmp_path: Path):
    (tmp_path / "README").write_text("This project indexes documents.\n")
    (tmp_path / "NEWS").write_text("Version 2 reads plain text.\n")
    (tmp_path / "notes.text").write_text("Notes spelled out.\n")
    (tmp_path / "tool").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50)
    documents, skipped = read(tmp_path)
    assert {name: (document.title, document.file_type) for name, document in documents.items()} == {
        "NEWS": ("NEWS", "text"),
        "README": ("README", "text"),
        "notes.text": ("notes", "text"),
    }
    assert documents["README"].text == "This project indexes documents.\n"
    assert skipped == {"tool": "binary (not text)"}


def test_an_unknown_suffix_is_read_as_text_only_where_include_names_it(tmp_path: Path):
    (tmp_path / "app.conf").write_text("listen = 8080\n")
    (tmp_path / "old.conf.gz").write_bytes(gzip.compress(b"listen = 80\n"))
    (tmp_path / "image.xyz").write_bytes(b"\x00\x01 not text")
    (tmp_path / "GUIDE.md").write_text(GUIDE)
    documents, skipped = read(tmp_path)
    assert list(documents) == ["GUIDE.md"]
    assert skipped == {
        "app.conf": "unsupported type .conf",
        "image.xyz": "unsupported type .xyz",
        "old.conf.gz": "unsupported type .conf",
    }

    documents, skipped = read(Source.at(tmp_path, include=["*.conf", "*.xyz"]))
    assert {name: document.file_type for name, document in documents.items()} == {
        "GUIDE.md": "md",  # a known suffix keeps its reader
        "app.conf": "conf",
        "old.conf.gz": "conf",  # the pattern names the file inside
    }
    assert documents["app.conf"].text == "listen = 8080\n"
    assert skipped == {"image.xyz": "binary (not text)"}

    alone, skipped = read(Source.at(tmp_path / "app.conf", include=["*.conf"]))
    assert list(alone) == ["app.conf"] and skipped == {}


def test_compressed_files_are_read_as_the_file_inside(tmp_path: Path):
    (tmp_path / "guide.md.gz").write_bytes(gzip.compress(GUIDE.encode()))
    (tmp_path / "notes.txt.bz2").write_bytes(bz2.compress(b"Plain notes.\n"))
    (tmp_path / "manual.rst.xz").write_bytes(lzma.compress(b"Manual\n======\n\nUsage\n-----\n\nRun it.\n"))
    (tmp_path / "CHANGES.gz").write_bytes(gzip.compress(b"Fixed the reader.\n"))
    (tmp_path / "photo.png.gz").write_bytes(gzip.compress(b"\x89PNG"))
    documents, skipped = read(tmp_path)
    guide = documents["guide.md.gz"]
    assert (guide.title, guide.file_type, guide.text) == ("Guide", "md", GUIDE)
    assert [path for _, path in guide.headings] == [("Guide",), ("Guide", "Install")]
    assert guide.source.endswith("/guide.md.gz") and guide.path == (tmp_path / "guide.md.gz").as_posix()
    assert (documents["notes.txt.bz2"].file_type, documents["notes.txt.bz2"].text) == ("txt", "Plain notes.\n")
    manual = documents["manual.rst.xz"]
    assert (manual.title, manual.file_type) == ("Manual", "rst")
    assert [path for _, path in manual.headings] == [("Manual",), ("Manual", "Usage")]
    assert (documents["CHANGES.gz"].title, documents["CHANGES.gz"].file_type) == ("CHANGES", "text")
    assert skipped == {"photo.png.gz": "unsupported type .png"}


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        (
            "cut.md.gz",
            gzip.compress(GUIDE.encode())[:-12],
            "not a valid gzip file (Compressed file ended before the end-of-stream marker was reached); "
            "test it with `gzip -t` or exclude it",
        ),
        (
            "renamed.md.gz",
            b"# Not compressed at all\n",
            "not a valid gzip file (Not a gzipped file (b'# ')); test it with `gzip -t` or exclude it",
        ),
        (
            "bad.txt.bz2",
            b"BZh9 damaged",
            "not a valid bzip2 file (Invalid data stream); test it with `bzip2 -t` or exclude it",
        ),
        (
            "bad.rst.xz",
            b"plain text, not xz at all",
            "not a valid xz file (Input format not supported by decoder); test it with `xz -t` or exclude it",
        ),
    ],
)
def test_a_damaged_compressed_file_is_skipped_in_one_line(tmp_path: Path, name: str, content: bytes, reason: str):
    (tmp_path / name).write_bytes(content)
    documents, skipped = read(tmp_path)
    assert documents == {} and skipped == {name: f"unreadable: {reason}"}


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_compressed_bomb_is_skipped_at_the_cap_and_the_next_file_is_read(tmp_path: Path, suffix: str):
    """A megabyte that decompresses to a gigabyte, read within a budget of 5 s and a quarter of that
    memory: decompressing it whole would break the budget; streaming stops at the cap, in time."""
    bomb = tmp_path / f"a-bomb.txt{suffix}"
    compressed_bomb(bomb, 1024)
    assert bomb.stat().st_size <= 2 * MB
    (tmp_path / "b-guide.md").write_text(GUIDE)
    skipped: list[SkippedFile] = []
    with BudgetedReader(FileBudget(seconds=5, memory=256 * MB)) as reader:
        documents = [
            document
            for path, source in list_files([Source.at(tmp_path)], skipped)
            for document in reader.read(path, source, skipped)
        ]
    assert [document.title for document in documents] == ["Guide"]
    limit = DECOMPRESSED_LIMIT // MB
    assert [(Path(item.path).name, item.reason) for item in skipped] == [
        (bomb.name, f"unreadable: it decompresses to more than {limit} MB (limit {limit} MB); unpack it or exclude it")
    ]


def test_the_watcher_syncs_the_files_the_build_reads(tmp_path: Path):
    for name in ("README", "page.md.gz", "app.conf", "app.conf.gz", "image.xyz", "photo.png.gz"):
        (tmp_path / name).write_text("x")
    wanted = _filter([Source.at(tmp_path, include=["*.conf"])], [])
    accepted = {name for name in sorted(path.name for path in tmp_path.iterdir()) if wanted(tmp_path / name)}
    assert accepted == {"README", "page.md.gz", "app.conf", "app.conf.gz"}
    assert not _filter([Source.at(tmp_path)], [])(tmp_path / "app.conf")


def test_include_is_recorded_with_the_source_and_kept_by_sync(tmp_path: Path):
    assert not may_read("app.conf"), "the test needs a suffix no reader reads"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "guide.md").write_text(GUIDE)
    (corpus / "app.conf").write_text("The server listens on port 8080.\n")
    (corpus / "data.xyz").write_text("Not included.\n")
    index = tmp_path / "idx"
    built = run_cli(
        "arag_mcp.indexer",
        "build",
        str(corpus),
        "--index",
        str(index),
        "--model",
        HASHED_MODEL,
        "--include",
        "*.conf",
        "--quiet",
    )
    assert built.returncode == 0, built.stderr
    assert "skipped corpus/data.xyz: unsupported type .xyz" in built.stderr
    assert read_manifest(str(index))["sources"] == [
        {"path": corpus.resolve().as_posix(), "exclude": [], "include": ["*.conf"]}
    ]
    assert _sources(index) == ["corpus/app.conf", "corpus/guide.md"]

    (corpus / "db.conf").write_text("The database listens on port 5432.\n")
    synced = run_cli("arag_mcp.indexer", "sync", "--index", str(index), "--quiet")
    assert synced.returncode == 0, synced.stderr
    assert _sources(index) == ["corpus/app.conf", "corpus/db.conf", "corpus/guide.md"]


def _sources(index: Path) -> list[str]:
    listed = run_cli("arag_mcp.indexer", "list", "--index", str(index), "--json")
    assert listed.returncode == 0, listed.stderr
    return sorted(document["source"] for document in json.loads(listed.stdout))


def test_a_file_skipped_as_unsupported_is_read_once_the_source_includes_it(tmp_path: Path):
    """An unchanged file is not read again, except one skipped for its type that a reader now reads."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "guide.md").write_text(GUIDE)
    (corpus / "app.conf").write_text("The server listens on port 8080.\n")
    index = tmp_path / "idx"
    built = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", str(index), "--model", HASHED_MODEL, "--quiet")
    assert built.returncode == 0 and "unsupported type .conf" in built.stderr
    assert _sources(index) == ["corpus/guide.md"]
    added = run_cli("arag_mcp.indexer", "add", str(corpus), "--index", str(index), "--include", "*.conf", "--quiet")
    assert added.returncode == 0, added.stderr
    assert _sources(index) == ["corpus/app.conf", "corpus/guide.md"]


def test_no_gitignore_is_recorded_and_reads_what_gitignore_names(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "guide.md").write_text(GUIDE)
    (corpus / ".gitignore").write_text("drafts/\n")
    (corpus / "drafts").mkdir()
    (corpus / "drafts" / "plan.md").write_text("# Plan\n\nThe gale season starts in March.\n")
    index = tmp_path / "idx"
    built = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", str(index), "--model", HASHED_MODEL)
    assert built.returncode == 0, built.stderr
    assert "corpus/drafts/: left out, ignored by .gitignore; pass --no-gitignore to read it" in built.stderr
    assert _sources(index) == ["corpus/guide.md"]
    again = run_cli("arag_mcp.indexer", "add", str(corpus), "--index", str(index), "--no-gitignore", "--quiet")
    assert again.returncode == 0, again.stderr
    assert read_manifest(str(index))["sources"] == [
        {"path": corpus.resolve().as_posix(), "exclude": [], "gitignore": False}
    ]
    assert _sources(index) == ["corpus/drafts/plan.md", "corpus/guide.md"]
    synced = run_cli("arag_mcp.indexer", "sync", "--index", str(index), "--quiet")
    assert synced.returncode == 0 and _sources(index) == ["corpus/drafts/plan.md", "corpus/guide.md"]


def test_files_named_as_projects_name_their_text_are_read_whatever_their_suffix(tmp_path: Path):
    folder = tmp_path / "doc"
    folder.mkdir()
    (folder / "README.Debian").write_text("This package keeps its cache in /var/cache.\n")
    with gzip.open(folder / "changelog.Debian.gz", "wt") as handle:
        handle.write("less (590-1) unstable; urgency=medium\n\n  * New upstream release.\n")
    (folder / "report.Debian").write_text("Not a name text files go by.\n")
    documents, skipped = read(folder)
    assert sorted(documents) == ["README.Debian", "changelog.Debian.gz"]
    assert skipped == {"report.Debian": "unsupported type .debian"}


def test_watch_takes_the_source_options_that_add_takes(tmp_path: Path):
    """watch adds its SOURCEs as add does, so it takes their patterns and --no-gitignore too."""
    args = parse_args(
        ["watch", str(tmp_path), "--index", str(tmp_path / "idx"), "--no-gitignore", "--include", "*.conf"]
    )
    options = build_options(args)
    assert options.gitignore is False and options.include == ("*.conf",)
