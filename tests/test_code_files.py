"""Source code and a repository's own rules: code chunked at its definitions with qualified names as
sections, identifiers found as written, lines kept, and what a repository leaves out."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.build_summary import BuildSummary
from arag_mcp.indexer.file_types import LINE_LAID_TYPES
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.sources.code import CODE_SUFFIXES
from arag_mcp.indexer.sources.document import Document, SkippedFile
from arag_mcp.indexer.sources.files import iter_documents
from arag_mcp.indexer.sources.outline import heading_path
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client

from .conftest import HASHED_MODEL, live_index, run_cli

pytestmark = pytest.mark.anyio

PYTHON = '''"""Zephyr ratios for the weather service."""

import math

SCALE = 3


@cached
def compute_zephyr_ratio(north, south):
    """The ratio of the north wind to the south wind."""
    return north / south


class HTTPServer(BaseServer):
    """Serves the ratios over HTTP."""

    def handle_request(self, request):
        ratio = compute_zephyr_ratio(request.north, request.south)
        return ratio

    async def close(self):
        self.closed = True
'''
POINTS = ", ".join(f'"{point}"' for point in ("north", "north-north-east", "north-east", "east-north-east") * 4)
COMPASS = f"POINTS = ({POINTS})\n\n\ndef bearing(name):\n    return POINTS.index(name) * 22.5\n"
"""A line of code longer than prose's 200 characters, before a definition."""
TYPESCRIPT = """export interface GaleOptions { port: number }

export const startGale = (options: GaleOptions) => {
  return options.port;
};

class GaleServer {
  listen() {
    return 1;
  }
}
"""
GO = """package gale

type Anemometer struct {
\tspeed int
}

func (a *Anemometer) Measure() int {
\treturn a.speed
}

func NewAnemometer() *Anemometer {
\treturn &Anemometer{}
}
"""


def read(*sources: Path) -> tuple[list[Document], list[SkippedFile]]:
    skipped: list[SkippedFile] = []
    return list(iter_documents(list(sources), skipped)), skipped


def sections(document: Document) -> dict[str, str]:
    """Each section name with the first line of text at its start."""
    return {path[0]: document.text[offset:].split("\n", 1)[0] for offset, path in document.headings}


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo") / "weather"
    (root / "src" / "weather").mkdir(parents=True)
    (root / "src" / "weather" / "zephyr.py").write_text(PYTHON)
    (root / "src" / "weather" / "__init__.py").write_text("def forecast():\n    return 'gale'\n")
    (root / "src" / "weather" / "compass.py").write_text(COMPASS)
    (root / "src" / "weather" / "build").mkdir()  # a package of the project's own, not a build's output
    (root / "src" / "weather" / "build" / "steps.py").write_text("def run_steps():\n    return 1\n")
    (root / "web").mkdir()
    (root / "web" / "gale.ts").write_text(TYPESCRIPT)
    (root / "gale.go").write_text(GO)
    (root / "pyproject.toml").write_text('[project]\nname = "weather"\n\n[tool.ruff]\nline-length = 100\n')
    (root / "package.json").write_text('{"name": "weather", "scripts": {"build": "tsc"}}')
    return root


def test_code_is_chunked_at_definitions_named_by_their_qualified_names(repository: Path):
    documents, skipped = read(repository)
    assert skipped == []
    by_name = {Path(document.source).name: document for document in documents}
    python = by_name["zephyr.py"]
    assert python.title == "zephyr.py" and python.file_type == "py" and python.text == PYTHON
    assert sections(python) == {
        "zephyr.compute_zephyr_ratio": "@cached",  # a decorated definition begins at its decorator
        "zephyr.HTTPServer": "class HTTPServer(BaseServer):",
        "zephyr.HTTPServer.handle_request": "def handle_request(self, request):",
        "zephyr.HTTPServer.close": "async def close(self):",
    }
    inside = python.text.index("return ratio")
    assert heading_path(python.headings, inside) == ("zephyr.HTTPServer.handle_request",)
    # a sentence of code is a run of lines, never across a definition's start
    sentence_texts = [python.text[start:end] for start, end in python.sentences]
    assert "def handle_request(self, request):\n        ratio = compute_zephyr_ratio" in sentence_texts[5]
    assert not any("return ratio" in text and "async def" in text for text in sentence_texts)

    assert set(sections(by_name["gale.ts"])) == {
        "gale.GaleOptions",
        "gale.startGale",
        "gale.GaleServer",
        "gale.GaleServer.listen",
    }
    assert set(sections(by_name["gale.go"])) == {"gale.Anemometer", "gale.Measure", "gale.NewAnemometer"}
    # a package's __init__ is named by its folder, as code that imports it names it
    assert set(sections(by_name["__init__.py"])) == {"weather.forecast"}
    assert set(sections(by_name["steps.py"])) == {"steps.run_steps"}
    assert set(sections(by_name["pyproject.toml"])) == {"pyproject.project", "pyproject.tool.ruff"}
    # a JSON file that holds no records is a configuration file, read as one
    assert set(sections(by_name["package.json"])) == {"package.name", "package.scripts", "package.scripts.build"}


def test_every_code_suffix_is_a_line_laid_type():
    assert {suffix.lstrip(".") for suffix in CODE_SUFFIXES} == LINE_LAID_TYPES


def test_records_json_is_still_read_as_records(tmp_path: Path):
    (tmp_path / "notes.json").write_text('[{"title": "Gale", "text": "A strong wind."}]')
    [document], skipped = read(tmp_path / "notes.json")
    assert skipped == [] and document.title == "Gale" and document.text == "A strong wind."


def test_what_a_repository_leaves_out_is_told_once_each(tmp_path: Path):
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n\nHow the wind is measured.\n")
    (root / ".gitignore").write_text("*.log\n/secret/\n")
    (root / "run.log").write_text("a log line\n")
    (root / "secret").mkdir()
    (root / "secret" / "keys.md").write_text("a key\n")
    (root / "docs" / ".gitignore").write_text("*.md\n!keep.md\n")
    (root / "docs" / "keep.md").write_text("kept by a negation\n")
    for folder in ("build", "vendor", "venv"):
        (root / folder).mkdir()
        (root / folder / "x.md").write_text("generated\n")
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "package-lock.json").write_text('{"lockfileVersion": 3}')
    (root / "app.min.js").write_text("var a=" + "1+" * 800 + "1;\n")
    (root / "api_pb2.py").write_text("# Generated by the protocol buffer compiler.  DO NOT EDIT!\nx = 1\n")

    documents, skipped = read(root)
    assert [document.source for document in documents] == ["project/docs/keep.md"]
    reasons = {item.path: item.reason for item in skipped}
    assert reasons == {
        "project/docs/guide.md": "left out, ignored by .gitignore; pass --no-gitignore to read it",
        "project/secret/": "left out, ignored by .gitignore; pass --no-gitignore to read it",
        "project/run.log": "left out, ignored by .gitignore; pass --no-gitignore to read it",
        "project/build/": "left out, a build folder; give it as a source to read it",
        "project/vendor/": "left out, a vendored folder; give it as a source to read it",
        "project/venv/": "left out, a virtual environment; give it as a source to read it",
        "project/package-lock.json": "lockfile (versions pinned by a package manager)",
        "project/app.min.js": "minified or data (a line of 1,608 characters); it is not read as code",
        "project/api_pb2.py": "generated (its first lines say 'DO NOT EDIT')",
    }
    assert all(item.left_out for item in skipped if item.reason.startswith("left out"))
    # a build folder given as a source is read
    [built], _ = read(root / "build")
    assert built.source == "build/x.md"


def test_a_build_sums_up_its_skips_by_reason(tmp_path: Path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.md").write_text("# Notes\n\nThe gale came at noon.\n")
    for name in ("a.png", "b.png", "c.bin"):
        (root / name).write_bytes(b"\x89PNG\x00\x01")
    (root / ".gitignore").write_text("*.tmp\n")
    (root / "x.tmp").write_text("scratch\n")
    result = run_cli("arag_mcp.indexer", "build", str(root), "--index", str(tmp_path / "idx"), "--model", HASHED_MODEL)
    assert result.returncode == 0, result.stderr
    said = result.stderr
    assert "skipped project/a.png: unsupported type .png" in said and "project/x.tmp: left out" in said
    assert "skipped 3 file(s) or record(s), listed above: 2 unsupported type .png, 1 unsupported type .bin" in said
    assert "left out 1 path(s), listed above: 1 ignored by .gitignore" in said


@pytest.fixture(scope="module")
def live(repository: Path, tmp_path_factory) -> Iterator[LiveIndex]:
    index = tmp_path_factory.mktemp("code-index") / "idx"
    Index(str(index)).add([repository], BuildOptions(model=HASHED_MODEL, progress=False, chunk_tokens=120))
    with live_index(index) as live:
        yield live


async def test_identifiers_are_found_as_written_and_code_keeps_its_lines(live: LiveIndex):
    async with Client(create_server(live, PROFILES["arag"])) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["compute_zephyr_ratio"], "top_k": 3})
        assert not found.is_error, found.content[0].text
        results = found.structured_content["results"]
        assert {result["title"] for result in results} == {"zephyr.py"}
        # every chunk is named, the first (imports, docstring) by the first definition it holds
        assert {result["section"] for result in results} == {
            "zephyr.compute_zephyr_ratio",
            "zephyr.HTTPServer.handle_request",
        }
        shown = "\n".join(result["snippet"] for result in results)
        # lines and their indents kept, where prose's hard-wrapped lines would be joined
        assert "    def handle_request(self, request):\n        ratio = compute_zephyr_ratio(" in shown

        named = await client.call_tool("keyword_search", {"keywords": ["HTTPServer"], "top_k": 3})
        assert "1 chunk matches" in named.content[0].text and "class HTTPServer(BaseServer):" in named.content[0].text


async def test_open_numbers_a_code_files_lines_as_the_file_does(live: LiveIndex, repository: Path):
    async with Client(create_server(live, PROFILES["agentic"])) as client:
        found = await client.call_tool("search", {"queries": ["the ratio of the north wind"], "top_k": 1})
        ref = found.structured_content["results"][0]["ref"]
        opened = await client.call_tool("open", {"ref": ref, "start_line": 0})
        text = opened.structured_content["text"]
        file_lines = PYTHON.split("\n")
        wanted = file_lines.index("    def handle_request(self, request):")
        numbered = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in text.split("\n") if ": " in line}
        assert numbered[str(wanted)] == file_lines[wanted]  # lines numbered from 0, as `open` numbers every document


async def test_a_long_line_of_code_is_one_line_so_the_next_are_numbered_as_in_the_file(live: LiveIndex):
    assert len(COMPASS.split("\n")[0]) > 250  # prose would wrap it
    async with Client(create_server(live, PROFILES["agentic"])) as client:
        found = await client.call_tool("search", {"queries": ["bearing of a point"], "keywords": ["bearing"]})
        ref = next(hit["ref"] for hit in found.structured_content["results"] if hit["title"] == "compass.py")
        text = (await client.call_tool("open", {"ref": ref, "start_line": 0})).structured_content["text"]
        numbered = dict(line.split(": ", 1) for line in text.split("\n") if ": " in line)
        assert numbered["3"] == "def bearing(name):" == COMPASS.split("\n")[3]


async def test_an_identifiers_parts_match_where_the_words_match_nothing_as_written(live: LiveIndex):
    async with Client(create_server(live, PROFILES["arag"])) as client:
        parts = await client.call_tool("keyword_search", {"keywords": ["zephyr ratio"], "top_k": 5})
        text = parts.content[0].text
        assert "'zephyr ratio' matches no chunk as written; identifiers holding its words matched instead: " in text
        assert "'compute_zephyr_ratio' (2)" in text
        assert {result["title"] for result in parts.structured_content["results"]} == {"zephyr.py"}

        camel = await client.call_tool("keyword_search", {"keywords": ["http server"], "top_k": 5})
        assert "identifiers holding its words matched instead: 'httpserver' (1)" in camel.content[0].text

        # a keyword that matches as written (in the title: "zephyr.py") keeps its own results; identifiers are named
        written = await client.call_tool("keyword_search", {"keywords": ["zephyr"], "top_k": 5})
        said = written.content[0].text
        assert (
            said.startswith("2 chunks match") and "'zephyr' also inside identifiers 'compute_zephyr_ratio' (2)" in said
        )
        more = await client.call_tool("keyword_search", {"keywords": ["zephyr"], "forms": True, "top_k": 5})
        assert more.structured_content["results"] and "compute_zephyr_ratio" in str(more.structured_content)


def test_a_watchers_sweeps_do_not_tell_left_out_paths_again(caplog: pytest.LogCaptureFixture):
    summary = BuildSummary(
        skipped=[
            SkippedFile("p/build/", "left out, a build folder; give it as a source to read it"),
            SkippedFile("p/a.png", "unsupported type .png"),
        ]
    )
    with caplog.at_level(logging.DEBUG, logger="arag_mcp.indexer.build"):
        summary.show_skips(left_out=False)
    levels = {record.getMessage(): record.levelno for record in caplog.records}
    assert levels == {
        "p/build/: left out, a build folder; give it as a source to read it": logging.DEBUG,
        "skipped p/a.png: unsupported type .png": logging.WARNING,
    }
