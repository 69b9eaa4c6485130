"""Shared fixtures: the packaged embedding model and a real index of the bundled sample."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))  # brute_force.py: the tools' definitions, shared with the benchmarks
SAMPLE = REPO / "examples" / "sample"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
BENCH_DATA = REPO.parent / "shared" / "bench-data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def onnx_cache(tmp_path_factory) -> Path:
    """ONNX exports of this run go to a fresh folder (the CLIs and servers started by tests inherit it)."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    os.environ["ARAG_MCP_CACHE"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def embedder():
    from arag_mcp.indexer.embedding.embedder import Embedder

    return Embedder().load()


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory) -> Path:
    """The bundled sample corpus, indexed once per test run with the default model."""
    from arag_mcp.indexer.build import BuildOptions, build_index

    index = tmp_path_factory.mktemp("sample") / "idx"
    build_index([SAMPLE], str(index), BuildOptions(progress=False))
    return index


@pytest.fixture(scope="session")
def scoring_index(tmp_path_factory) -> Path:
    """A crafted corpus whose keyword counts are known (see fixtures/scoring.jsonl)."""
    from arag_mcp.indexer.build import BuildOptions, build_index

    index = tmp_path_factory.mktemp("scoring") / "idx"
    build_index([FIXTURES / "scoring.jsonl"], str(index), BuildOptions(progress=False))
    return index


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m arag_mcp.<module> args...` as a user would, capturing both streams."""
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def kill_build_when(arguments: Sequence[str], ready: Callable[[], bool], timeout: float) -> None:
    """Run `arag-index ARGUMENTS` and kill it (SIGKILL) as soon as `ready()` holds: an interrupted build."""
    process = subprocess.Popen([sys.executable, "-m", "arag_mcp.indexer", *arguments], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert process.poll() is None, "the build finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
