"""The base install: the default model is built and served without torch, and an index carries its
query encoder, so any server answers from it with nothing to export."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from arag_mcp.indexer.index.manifest import ENCODER_DIR

from .conftest import BUCKET, SAMPLE, run_cli

HEAVY = ("torch", "sentence_transformers", "transformers")
QUESTION = "query=Which element is named after Poland?"

WITHOUT_TORCH = """
import json, sys
for name in {heavy!r}:
    sys.modules[name] = None  # any import of it fails, as where it is not installed
from arag_mcp.indexer.cli import main as index_main
from arag_mcp.server.cli import main as server_main
codes = []
for command, argv in {commands!r}:
    codes.append((index_main if command == "arag-index" else server_main)(argv))
loaded = sorted(name for name in sys.modules if name.split(".")[0] in {heavy!r} and sys.modules[name] is not None)
print(json.dumps({{"codes": codes, "loaded": loaded}}), file=sys.stderr)
"""


def without_torch(commands: list[tuple[str, list[str]]], cache: Path, env: dict[str, str] | None = None):
    """Run the commands in one fresh process where torch, transformers and sentence-transformers cannot
    be imported, with CACHE as the user's cache; returns (exit codes, stdout, stderr)."""
    script = WITHOUT_TORCH.format(heavy=HEAVY, commands=commands)
    environment = {**os.environ, "ARAG_MCP_CACHE": str(cache), **(env or {})}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=environment
    )
    report = json.loads(result.stderr.strip().splitlines()[-1])
    assert report["loaded"] == [], report
    return report["codes"], result.stdout, result.stderr


def first_title(stdout: str) -> str:
    line = next(line for line in stdout.splitlines() if line.startswith("[1]"))
    return line.split("title: ")[1].split(" |")[0]


def test_build_and_serve_need_no_torch(tmp_path: Path):
    """A fresh cache: the default model's encoder is written from its weights without torch."""
    index = str(tmp_path / "idx")
    codes, stdout, stderr = without_torch(
        [
            ("arag-index", ["build", str(SAMPLE), "--index", index, "--quiet"]),
            ("arag-mcp", ["--index", index, "--call", "semantic_search", QUESTION]),
        ],
        tmp_path / "cache",
    )
    assert codes == [0, 0], stderr
    assert first_title(stdout) == "Polonium"
    assert len(list((tmp_path / "idx" / ENCODER_DIR).iterdir())) == 1


def test_index_moved_elsewhere_is_served_and_extended_with_its_own_encoder(sample_index: Path, tmp_path: Path):
    moved = tmp_path / "elsewhere" / "idx"
    shutil.copytree(sample_index, moved)
    extra = tmp_path / "astatine.md"
    extra.write_text("# Astatine\n\nAstatine is the rarest naturally occurring element in the Earth's crust.\n")
    empty_cache = tmp_path / "cache"
    codes, stdout, stderr = without_torch(
        [
            ("arag-mcp", ["--index", str(moved), "--call", "semantic_search", QUESTION]),
            ("arag-index", ["add", str(extra), "--index", str(moved), "--quiet"]),
            ("arag-mcp", ["--index", str(moved), "--call", "semantic_search", "query=the rarest element in the crust"]),
        ],
        empty_cache,
    )
    assert codes == [0, 0, 0], stderr
    assert [line.split("title: ")[1].split(" |")[0] for line in stdout.splitlines() if line.startswith("[1]")] == [
        "Polonium",
        "Astatine",
    ]
    assert not (empty_cache / "onnx").exists()  # nothing was exported: the index's encoder was used


def test_altered_or_missing_encoder_is_refused(sample_index: Path, tmp_path: Path):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    [folder] = (index / ENCODER_DIR).iterdir()
    model = folder / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only the checksum can tell
    model.write_bytes(bytes(data))

    result = subprocess.run(
        [sys.executable, "-m", "arag_mcp.server", "--index", str(index), "--call", "semantic_search", QUESTION],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "model.onnx differs from the one the index was built with" in result.stdout + result.stderr
    assert "--rebuild" in result.stdout + result.stderr and "Traceback" not in result.stderr
    assert "Polonium" not in result.stdout

    extra = tmp_path / "note.md"
    extra.write_text("# Note\n\nA note about polonium.\n")
    added = subprocess.run(
        [sys.executable, "-m", "arag_mcp.indexer", "add", str(extra), "--index", str(index), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert added.returncode == 2 and added.stderr.strip().count("\n") == 0, added.stderr
    assert "model.onnx differs" in added.stderr

    model.unlink()
    result = subprocess.run(
        [sys.executable, "-m", "arag_mcp.server", "--index", str(index), "--call", "keyword_search", "keywords=radium"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0, result.stderr
    assert "model.onnx is missing" in result.stderr and "--rebuild" in result.stderr


def test_a_model_that_needs_torch_names_the_extra(tmp_path: Path):
    """A model other than BERT is traced through torch: without it, one line says what to install."""
    from arag_mcp.indexer.embedding.settings import DEFAULT_MODEL_DIR

    model = tmp_path / "other-model"
    shutil.copytree(DEFAULT_MODEL_DIR, model)
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "model_type": "distilbert"}))
    codes, _, stderr = without_torch(
        [("arag-index", ["build", str(SAMPLE), "--index", str(tmp_path / "idx"), "--model", str(model), "--quiet"])],
        tmp_path / "cache",
    )
    assert codes == [2]
    [message] = [line for line in stderr.splitlines() if "error" in line]
    assert "pip install 'arag-mcp[models]'" in message


def test_remote_index_encoder_is_fetched_once_into_the_cache(s3_endpoint: str, tmp_path: Path, onnx_cache: Path):
    """Built and served where the user's cache holds the export; then served with an empty cache."""
    index = f"s3://{BUCKET}/carried"
    cache = tmp_path / "cache"
    codes, stdout, stderr = without_torch(
        [
            ("arag-index", ["build", str(SAMPLE), "--index", index, "--quiet"]),
            ("arag-mcp", ["--index", index, "--call", "semantic_search", QUESTION]),
        ],
        onnx_cache,
    )
    assert codes == [0, 0], stderr
    codes, stdout, stderr = without_torch(
        [("arag-mcp", ["--index", index, "--call", "semantic_search", QUESTION])], cache
    )
    assert codes == [0], stderr
    assert first_title(stdout) == "Polonium"
    info = run_cli("arag_mcp.indexer", "info", "--index", index)
    assert info.returncode == 0, info.stderr
    carried = json.loads(info.stdout)["encoder"]["folder"].split("/")[1]
    assert [folder.name for folder in (cache / "encoders").iterdir()] == [carried]
    assert not (cache / "onnx").exists()
