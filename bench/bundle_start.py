"""How soon the Claude Desktop bundle answers when Desktop starts it: unpacked into a folder named as
Desktop names it, started from its own `mcp_config` (`uv run --directory ... server/main.py`) with an
empty uv cache (every dependency fetched from the package index), then again with that cache; the
seconds to `initialize`, the first keyword answer and the first semantic answer, over stdio.

    python bench/bundle_start.py                        # packs this checkout's bundle with its wheel
    python bench/bundle_start.py --bundle arag-mcp.mcpb --index ~/notes-idx
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RESULTS, log, write_json  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


async def first_answers(folder: Path, index: Path, cache: Path) -> dict[str, float]:
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("PIP_", "UV_"))}
    environment |= {"UV_CACHE_DIR": str(cache), "UV_NO_CONFIG": "1", "ARAG_MCP_INDEX": str(index)}
    server = StdioServerParameters(
        command="uv", args=["run", "--directory", str(folder), "--quiet", "server/main.py"], env=environment, cwd="/"
    )
    started = time.monotonic()
    async with Client(server) as client:
        initialized = time.monotonic() - started
        keyword = await client.call_tool("keyword_search", {"keywords": ["radium"]})
        keyword_at = time.monotonic() - started
        semantic = await client.call_tool("semantic_search", {"query": "Which element is named after Poland?"})
        semantic_at = time.monotonic() - started
    assert not keyword.is_error and not semantic.is_error, keyword.content[0].text
    return {"initialize_s": initialized, "first_keyword_s": keyword_at, "first_semantic_s": semantic_at}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, help="a packed bundle (default: pack this checkout's, with its wheel)")
    parser.add_argument("--index", type=Path, help="the index to serve (default: the sample, built here)")
    parser.add_argument("--out", type=Path, default=RESULTS / "bundle_start.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        work_path = Path(work)
        bundle = args.bundle or work_path / "arag-mcp.mcpb"
        if args.bundle is None:
            pack = [sys.executable, str(REPO / "bundle" / "pack_with_wheel.py"), "--out", str(bundle)]
            subprocess.run(pack, check=True)
        index = args.index or work_path / "idx"
        if args.index is None:
            build = [sys.executable, "-m", "arag_mcp.indexer", "build", str(REPO / "examples" / "sample")]
            subprocess.run([*build, "--index", str(index), "--quiet"], check=True)
        folder = work_path / "Claude Extensions" / "arag-mcp"
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(folder)
        results = {"bundle_mib": bundle.stat().st_size / 2**20}
        for start in ("cold", "warm"):
            results[start] = anyio.run(first_answers, folder, index, work_path / "uv-cache")
            log(f"{start}: {results[start]}")
        write_json(args.out, results)
    print(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
