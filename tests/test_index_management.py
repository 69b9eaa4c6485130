"""Managing an index: add, remove, list and sync documents; stray files; interrupted builds; the lock.

Real files, real LanceDB, the CLI run as a user runs it; built with the model of hashed words.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.index.snapshot import list_documents, open_index
from arag_mcp.indexer.indexes import Index

from .conftest import HASHED_MODEL, run_cli

QUIET = BuildOptions(model=HASHED_MODEL, progress=False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _titles(index: Path) -> list[str]:
    return sorted(document["title"] for document in list_documents(str(index)))


def test_add_keeps_remove_drops_only_its_target_and_sync_drops_only_what_vanished(tmp_path: Path):
    index = tmp_path / "idx"
    a = _write(tmp_path / "docs" / "a.md", "# Alpha\n\nAlpha is the first letter.")
    c = _write(tmp_path / "docs" / "c.md", "# Gamma\n\nGamma is the third letter.")
    b = _write(tmp_path / "other" / "b.md", "# Beta\n\nBeta is the second letter.")

    result = run_cli("arag_mcp.indexer", "build", str(a), "--index", str(index), "--model", HASHED_MODEL, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "added 1, updated 0, removed 0, unchanged 0" in result.stderr
    result = run_cli("arag_mcp.indexer", "add", str(b), "--index", str(index), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "added 1, updated 0, removed 0, unchanged 1" in result.stderr
    assert _titles(index) == ["Alpha", "Beta"]

    listed = run_cli("arag_mcp.indexer", "list", "--index", str(index), "--json")
    assert listed.returncode == 0, listed.stderr
    documents = json.loads(listed.stdout)
    assert [(d["title"], d["source"], d["chunks"]) for d in documents] == [("Alpha", "a.md", 1), ("Beta", "b.md", 1)]
    assert all(d["indexed_at"] and d["doc_id"] for d in documents)
    plain = run_cli("arag_mcp.indexer", "list", "--index", str(index))
    assert [line.split("\t")[:3] for line in plain.stdout.splitlines()] == [
        ["a.md", "Alpha", "1 chunks"],
        ["b.md", "Beta", "1 chunks"],
    ]

    removed = Index(str(index)).remove([str(b)])
    assert (removed.removed, removed.unchanged) == (1, 1)
    assert _titles(index) == ["Alpha"]
    assert "Beta" not in open_index(str(index)).chunks.table.to_pandas()["title"].tolist()

    Index(str(index)).add([tmp_path / "docs", b], QUIET)
    assert _titles(index) == ["Alpha", "Beta", "Gamma"]
    c.unlink()
    synced = Index(str(index)).sync(QUIET)
    assert (synced.added, synced.updated, synced.removed, synced.unchanged) == (0, 0, 1, 2)
    assert _titles(index) == ["Alpha", "Beta"]
    assert open_index(str(index)).manifest.counts.documents == 2

    (tmp_path / "docs").rename(tmp_path / "gone")
    assert Index(str(index)).sync(QUIET).removed == 1
    assert _titles(index) == ["Beta"]


def test_build_on_an_existing_index_adds_and_drops_nothing(tmp_path: Path):
    index = tmp_path / "idx"
    six = [_write(tmp_path / "docs" / f"d{i}.md", f"# D{i}\n\nDocument {i}.") for i in range(6)]
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    note = _write(tmp_path / "new-note.md", "# Note\n\nA new note.")
    summary = Index(str(index)).add([note], QUIET)
    assert (summary.added, summary.removed, summary.documents) == (1, 0, 7)
    six[0].unlink()
    assert Index(str(index)).add([note], QUIET).removed == 0
    assert len(list_documents(str(index))) == 7


def test_a_path_inside_a_recorded_folder_is_named_from_it_and_removing_it_excludes_it(tmp_path: Path):
    index = tmp_path / "idx"
    _write(tmp_path / "docs" / "guide" / "intro.md", "# Intro\n\nHello.")
    Index(str(index)).add([tmp_path / "docs"], QUIET)
    later = _write(tmp_path / "docs" / "guide" / "later.md", "# Later\n\nAdded later.")
    Index(str(index)).add([later], QUIET)
    assert [d["source"] for d in list_documents(str(index))] == ["docs/guide/intro.md", "docs/guide/later.md"]
    assert read_manifest(str(index))["sources"] == [{"path": (tmp_path / "docs").resolve().as_posix(), "exclude": []}]

    Index(str(index)).remove([str(later)])
    assert Index(str(index)).sync(QUIET).added == 0
    assert [d["source"] for d in list_documents(str(index))] == ["docs/guide/intro.md"]
    assert Index(str(index)).add([later], QUIET).added == 1


def test_the_same_file_from_two_working_directories_is_embedded_once(tmp_path: Path, monkeypatch):
    index = tmp_path / "idx"
    _write(tmp_path / "notes" / "new-note.md", "# Note\n\nThe note says hello. It has two sentences.")
    monkeypatch.chdir(tmp_path / "notes")
    first = Index(str(index)).add(["new-note.md"], QUIET)
    monkeypatch.chdir(tmp_path)
    second = Index(str(index)).add(["notes/new-note.md"], QUIET)
    assert first.embedded_sentences == 3
    assert (second.embedded_sentences, second.unchanged, second.documents) == (0, 1, 1)
    [document] = list_documents(str(index))
    assert document["source"] == "new-note.md"


def test_a_folder_with_stray_files_builds_and_the_summary_names_each(tmp_path: Path):
    corpus = tmp_path / "corpus"
    _write(corpus / "dns.md", "# DNS\n\nThe dns module resolves names.")
    _write(corpus / "index.json", json.dumps({"type": "module", "modules": [{"name": "dns"}], "globals": []}))
    _write(corpus / "records.jsonl", '{"id": "r1", "text": "A fine record."}\n{"id": "r2", "text": broken}\n')
    (corpus / "report.docx").write_bytes(b"PK\x03\x04 zipped")
    (corpus / "logs.gz").write_bytes(b"\x1f\x8b\x08 gzip")
    (corpus / "noise.txt").write_bytes(random.Random(1).randbytes(50_000).replace(b"\x00", b"\x01"))
    os.mkfifo(corpus / "pipe.txt")
    index = tmp_path / "idx"

    strict = run_cli(
        "arag_mcp.indexer", "build", str(corpus), "--index", str(index), "--model", HASHED_MODEL, "--quiet", "--strict"
    )
    assert strict.returncode == 1, strict.stderr
    assert "Traceback" not in strict.stderr and "corpus/logs.gz" in strict.stderr
    assert read_manifest(str(index)) is None

    result = run_cli(
        "arag_mcp.indexer", "build", str(corpus), "--index", str(index), "--model", HASHED_MODEL, "--quiet"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    skipped = sorted(line for line in lines if line.startswith("skipped corpus/"))
    assert [line.split(":")[0] for line in skipped] == [  # index.json holds no records: a configuration file
        "skipped corpus/logs.gz",
        "skipped corpus/noise.txt",
        "skipped corpus/pipe.txt",
        "skipped corpus/records.jsonl",
        "skipped corpus/report.docx",
    ]
    assert "skipped corpus/records.jsonl: line 2: invalid JSON" in result.stderr
    assert (
        "skipped 5 file(s) or record(s), listed above: 2 unreadable, 1 binary, 1 not a regular file, 1 invalid JSON"
        in lines
    )
    assert "Traceback" not in result.stderr
    assert _titles(index) == ["", "DNS", "index.json"]


def test_links_out_of_the_folder_are_skipped_unless_followed(tmp_path: Path):
    """A cloned folder's `docs/notes.md` pointing at a credentials file (no extension) must not put
    the secret in the index; links inside the folder are read; --follow-links opts in, for sync too."""
    secret = _write(tmp_path / "home" / ".aws" / "credentials", "aws_secret_access_key = wJalrXUtnFEMI")
    repo = tmp_path / "repo"
    _write(repo / "docs" / "guide.md", "# Guide\n\nThe guide explains setup.")
    (repo / "docs" / "notes.md").symlink_to(secret)
    _write(repo / ".shared" / "setup.md", "# Setup\n\nSetup takes a minute.")
    (repo / "docs" / "setup.md").symlink_to(repo / ".shared" / "setup.md")
    index = tmp_path / "idx"

    result = run_cli("arag_mcp.indexer", "build", str(repo), "--index", str(index), "--model", HASHED_MODEL, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "skipped repo/docs/notes.md: a link to a file outside the folder; pass --follow-links to read it" in (
        result.stderr
    )
    assert "credentials" not in result.stderr and str(secret) not in result.stderr
    chunks = open_index(str(index)).chunks.table.to_pandas()["text"].tolist()
    assert not any("wJalrXUtnFEMI" in text for text in chunks)
    assert _titles(index) == ["Guide", "Setup"]

    followed = run_cli(
        "arag_mcp.indexer",
        "build",
        str(repo),
        "--index",
        str(index),
        "--model",
        HASHED_MODEL,
        "--quiet",
        "--follow-links",
        "--rebuild",
    )
    assert followed.returncode == 0, followed.stderr
    assert any("wJalrXUtnFEMI" in text for text in open_index(str(index)).chunks.table.to_pandas()["text"])
    assert read_manifest(str(index))["sources"] == [
        {"path": repo.resolve().as_posix(), "exclude": [], "follow_links": True}
    ]
    assert Index(str(index)).sync(QUIET).skipped == []


def test_terminal_control_characters_from_documents_are_printed_escaped(tmp_path: Path):
    """A file name that sets the terminal's title (OSC) and a title that clears the screen (CSI)
    reach `list`, the build's skip lines and `arag-mcp --call` escaped."""
    corpus = tmp_path / "corpus"
    _write(corpus / "\x1b]0;owned\x07.md", "# \x1b[2J\x9b2JCleared\n\nThe screen stays as it was.")
    _write(corpus / "bad\x1b[31m.xyz", "not read")
    index = tmp_path / "idx"
    built = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", str(index), "--model", HASHED_MODEL, "--quiet")
    assert built.returncode == 0, built.stderr
    assert "skipped corpus/bad\\u001b[31m.xyz: unsupported type .xyz" in built.stderr
    listed = run_cli("arag_mcp.indexer", "list", "--index", str(index))
    as_json = run_cli("arag_mcp.indexer", "list", "--index", str(index), "--json")
    called = run_cli("arag_mcp.server", "--index", str(index), "--call", "keyword_search", "keywords=screen")
    for result in (built, listed, as_json, called):
        assert result.returncode == 0, result.stderr
        assert not any(char in result.stdout + result.stderr for char in "\x1b\x07\x9b"), result
    assert listed.stdout.split("\t")[:2] == ["corpus/\\u001b]0;owned\\u0007.md", "\\u001b[2J\\u009b2JCleared"]
    assert json.loads(as_json.stdout)[0]["title"] == "\x1b[2J\x9b2JCleared"
    assert "\\u001b[2J\\u009b2JCleared" in called.stdout


def test_an_index_given_as_its_own_source_is_a_usage_error(tmp_path: Path):
    """`--index` equal to the source folder read nothing and said nothing (rc 0)."""
    docs = _write(tmp_path / "docs" / "a.md", "# Alpha\n\nAlpha text.").parent
    same = run_cli("arag_mcp.indexer", "build", str(docs), "--index", str(docs), "--model", HASHED_MODEL, "--quiet")
    assert same.returncode == 2
    assert (
        same.stderr.strip()
        == f"arag-index: error: {docs} is the index folder {docs}; give --index a folder outside the documents"
    )
    assert not (docs / "manifest.json").exists()
    index = tmp_path / "idx"
    assert (
        run_cli(
            "arag_mcp.indexer", "build", str(docs), "--index", str(index), "--model", HASHED_MODEL, "--quiet"
        ).returncode
        == 0
    )
    _write(index / "notes" / "b.md", "# Beta\n\nBeta text.")
    inside = run_cli("arag_mcp.indexer", "add", str(index / "notes"), "--index", str(index), "--quiet")
    assert inside.returncode == 2 and "is inside the index folder" in inside.stderr and "Traceback" not in inside.stderr
    beside = run_cli(
        "arag_mcp.indexer", "build", str(tmp_path), "--index", str(index), "--model", HASHED_MODEL, "--quiet"
    )
    assert beside.returncode == 0, beside.stderr  # an index inside the folder read is left out of it
    assert _titles(index) == ["Alpha"]


def test_every_command_takes_quiet(tmp_path: Path):
    index = tmp_path / "idx"
    a = _write(tmp_path / "docs" / "a.md", "# Alpha\n\nAlpha text.")
    for command in (
        ["build", str(a), "--model", HASHED_MODEL],
        ["add", str(a)],
        ["sync"],
        ["list"],
        ["info"],
        ["describe"],
        ["remove", str(a)],
    ):
        result = run_cli("arag_mcp.indexer", *command, "--index", str(index), "--quiet")
        assert result.returncode == 0, (command, result.stderr)


UNGUARDED_SCRIPT = """
import sys
from arag_mcp.indexer import BuildOptions, Index

summary = Index(sys.argv[2]).add([sys.argv[1]], BuildOptions(progress=False))
print(summary.documents)
"""


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_script_that_builds_at_its_top_level_reads_its_files_in_the_reader_process(tmp_path: Path, how: str):
    """The reader process is spawned: a script without `if __name__ == "__main__":` is not run again
    in it (it would build again there and wait for the index's lock for ever)."""
    _write(tmp_path / "docs" / "a.md", "# Alpha\n\nAlpha text.")
    script = tmp_path / "build_notes.py"
    script.write_text(UNGUARDED_SCRIPT)
    command = [sys.executable, str(script) if how == "file" else "-"]
    result = subprocess.run(
        [*command, str(tmp_path / "docs"), str(tmp_path / "idx")],
        input=UNGUARDED_SCRIPT if how == "stdin" else None,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and result.stdout.strip() == "1", result.stderr
    assert "reader process did not start" not in result.stderr, result.stderr
