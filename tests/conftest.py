"""Shared fixtures: the packaged embedding model, real indexes of the bundled sample, and the model
of hashed words (HASHED_MODEL) that logic tests build with."""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from arag_mcp.indexer.embedding.settings import DEFAULT_MODEL, HASHED_MODEL

if TYPE_CHECKING:
    from arag_mcp.server.search.live_index import LiveIndex

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))  # brute_force.py: the semantic tools' definitions, shared with the benchmarks
SAMPLE = REPO / "examples" / "sample"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
BENCH_DATA = REPO.parent / "shared" / "bench-data"
BUCKET = "arag-test"
"""The bucket `s3_endpoint` makes."""

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Workers for `-n auto` (pyproject's addopts): one a CPU for the default suite, whose tests wait
    on timers, stores and processes as much as they compute; none where slow tests are selected,
    which start servers, floods and Ray clusters of their own and are timed one at a time."""
    return None if "not slow" in config.getoption("markexpr") else 0


@pytest.fixture(scope="session", autouse=True)
def onnx_cache() -> Path:
    """The user's ONNX export cache, kept across runs (the CLIs and servers started by tests inherit it).

    An export's folder is keyed by the model's files, the precision and the export recipe, so a
    changed model makes a new one, as does a model a test saves in its temporary folder.
    """
    from arag_mcp.indexer.user_cache import cache_root

    folder = cache_root()
    os.environ["ARAG_MCP_CACHE"] = str(folder)
    return folder


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on a free loopback port, the bucket BUCKET, and the AWS variables that
    point at it (set for this module's tests and the processes they start)."""
    moto_server = pytest.importorskip("moto.server", reason="needs moto[server]: pip install 'moto[server]'")
    boto3 = pytest.importorskip("boto3")
    from .mcp_helpers import free_port

    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # its request log is not the commands' stderr
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    with pytest.MonkeyPatch.context() as env:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT", "AWS_DEFAULT_REGION"):
            env.delenv(name, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_REGION", "us-east-1")
        env.setenv("AWS_ENDPOINT_URL", endpoint)
        env.setenv("AWS_ALLOW_HTTP", "true")
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield endpoint
    server.stop()


@pytest.fixture(scope="session")
def embedder():
    from arag_mcp.indexer.embedding.embedder import Embedder

    return Embedder().load()


@pytest.fixture(scope="session")
def hashed_embedder():
    """HASHED_MODEL, loaded: what queries to an index of it are embedded with."""
    from arag_mcp.indexer.embedding.embedder import Embedder

    return Embedder(HASHED_MODEL).load()


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory) -> Path:
    """The bundled sample corpus, indexed once per test run with the default model."""
    from arag_mcp.indexer.build_options import BuildOptions
    from arag_mcp.indexer.indexes import Index

    index = tmp_path_factory.mktemp("sample") / "idx"
    Index(str(index)).add([SAMPLE], BuildOptions(progress=False))
    return index


@pytest.fixture(scope="session")
def hashed_sample_index(tmp_path_factory) -> Path:
    """The bundled sample corpus, indexed once per test run with HASHED_MODEL: for tests of what an
    index holds and how the tools answer, where the model is not the point."""
    from arag_mcp.indexer.build_options import BuildOptions
    from arag_mcp.indexer.indexes import Index

    index = tmp_path_factory.mktemp("hashed-sample") / "idx"
    Index(str(index)).add([SAMPLE], BuildOptions(model=HASHED_MODEL, progress=False))
    return index


@pytest.fixture(scope="session")
def scoring_index(tmp_path_factory) -> Path:
    """A crafted corpus whose keyword counts are known (see fixtures/scoring.jsonl)."""
    from arag_mcp.indexer.build_options import BuildOptions
    from arag_mcp.indexer.indexes import Index

    index = tmp_path_factory.mktemp("scoring") / "idx"
    Index(str(index)).add([FIXTURES / "scoring.jsonl"], BuildOptions(progress=False))
    return index


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """`os.environ` with VALUES set, restored afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_cli(module: str, *args: str, env: dict[str, str] | None = None) -> CliResult:
    """Run the `main(argv)` of `arag_mcp.<module>` in this process, capturing both streams and its exit status.

    The command's own logging set-up runs as in a fresh process (pytest's handlers are set aside
    meanwhile), so what it logs lands in the captured stderr.
    """
    if module == "arag_mcp.indexer":
        from arag_mcp.indexer.cli import main
    else:
        from arag_mcp.server.cli import main
    stdout, stderr = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    try:
        with environment(env or {}), redirect_stdout(stdout), redirect_stderr(stderr):
            try:
                code = main(list(args))
            except SystemExit as stop:  # argparse: usage errors, --help, --version
                code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return CliResult(code, stdout.getvalue(), stderr.getvalue())


def titled_records_index(folder: Path, records: list[tuple[str, str]], model: str = DEFAULT_MODEL) -> Path:
    """An index built in `folder` with `model` of one JSONL file, a record (id r0, r1, ...) per (title, text)."""
    import json

    from arag_mcp.indexer.build_options import BuildOptions
    from arag_mcp.indexer.indexes import Index

    lines = [json.dumps({"id": f"r{n}", "title": title, "text": text}) for n, (title, text) in enumerate(records)]
    (folder / "records.jsonl").write_text("\n".join(lines))
    Index(str(folder / "idx")).add([folder / "records.jsonl"], BuildOptions(model=model, progress=False))
    return folder / "idx"


@contextmanager
def live_index(index: Path | str, *, load_model: bool = True, **options: Any) -> Iterator[LiveIndex]:
    """A started `LiveIndex` over INDEX (OPTIONS go to its constructor), closed afterwards."""
    from arag_mcp.server.search.live_index import LiveIndex

    live = LiveIndex(str(index), **options)
    live.start(load_model=load_model)
    try:
        yield live
    finally:
        live.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
