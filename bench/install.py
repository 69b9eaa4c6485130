"""What a user's install costs: the installed size of the wheel with each set of extras, and the time
from `uvx --from <wheel> arag-mcp` to the first answers, with an empty uv cache (cold: everything
downloaded) and with the cache that run left (warm).

    python bench/install.py                       # builds the wheel and the sample index first
    python bench/install.py --wheel dist/arag_mcp-0.1.0-py3-none-any.whl --index ./idx

Sizes: `uv venv` + `uv pip install <wheel>[extras]` in a fresh folder, files copied out of uv's cache
(not linked), so the folder holds all it installs; the largest packages are listed. Times: a host's
view through the MCP SDK's stdio client: the handshake answered, `keyword_search` answered, and
`semantic_search` answered (the embedding model loaded). Dependencies come from PyPI, so cold
times depend on the network. Figures are printed and written to bench/results/install.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from common import RESULTS, log
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
EXTRAS = {"base": "", "models": "[models]", "everything": "[models,agent,ray]"}
QUESTION = "Which element is named after Poland?"


def folder_size(folder: Path) -> int:
    """Bytes of the files under FOLDER, each file once, links not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            status = os.lstat(os.path.join(root, name))
            if (status.st_dev, status.st_ino) not in seen:
                seen.add((status.st_dev, status.st_ino))
                total += status.st_size
    return total


def environment(home: Path, uv_cache: Path) -> dict[str, str]:
    """A user with uv and nothing of this checkout: no virtual environment on PATH, caches under HOME."""
    own_bin = str(Path(sys.prefix) / "bin")
    path = [entry for entry in os.environ["PATH"].split(os.pathsep) if entry != own_bin]
    values = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "ARAG_", "VIRTUAL_ENV"))}
    base_python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    return values | {
        "PATH": os.pathsep.join(path),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "UV_CACHE_DIR": str(uv_cache),
        "UV_PYTHON": str(base_python),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
        "UV_LINK_MODE": "copy",
    }


def uv(*args: str, env: dict[str, str]) -> None:
    result = subprocess.run([shutil.which("uv"), *args], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"uv {' '.join(args)} failed:\n{result.stderr[-3000:]}")


def installed_size(wheel: Path, extras: str, work: Path, uv_cache: Path) -> dict:
    venv = work / f"venv{extras or '-base'}"
    env = environment(work / "home", uv_cache)
    uv("venv", "--quiet", str(venv), env=env)
    started = time.perf_counter()
    uv("pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), f"{wheel}{extras}", env=env)
    seconds = time.perf_counter() - started
    site = next((venv / "lib").glob("python*/site-packages"))
    packages = sorted(
        ((folder_size(p) if p.is_dir() else p.stat().st_size, p.name) for p in site.iterdir()), reverse=True
    )
    return {
        "extras": extras or "(none)",
        "mb": round(folder_size(venv) / 2**20, 1),
        "install_s": round(seconds, 1),
        "largest_mb": {name: round(size / 2**20, 1) for size, name in packages[:8]},
    }


async def first_answers(wheel: Path, index: Path, env: dict[str, str]) -> dict:
    server = StdioServerParameters(
        command=shutil.which("uvx"), args=["--from", str(wheel), "arag-mcp", "--index", str(index)], env=env
    )
    started = time.perf_counter()
    times = {}
    async with Client(server) as client:
        times["handshake_s"] = time.perf_counter() - started
        found = await client.call_tool("keyword_search", {"keywords": ["radium"]})
        times["keyword_search_s"] = time.perf_counter() - started
        answered = await client.call_tool("semantic_search", {"query": QUESTION})
        times["semantic_search_s"] = time.perf_counter() - started
    if found.is_error or answered.is_error or "polonium" not in answered.content[0].text.lower():
        sys.exit(f"unexpected answers: {found.content[0].text[:300]} / {answered.content[0].text[:300]}")
    return {name: round(value, 1) for name, value in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="the wheel to install (default: python -m build of this checkout)")
    parser.add_argument("--index", type=Path, help="an index to serve (default: the sample, built by this install)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arag-install-") as scratch:
        work = Path(scratch)
        wheel = args.wheel
        if wheel is None:
            log("building the wheel")
            subprocess.run(
                [sys.executable, "-m", "build", "--wheel", "--outdir", str(work / "dist"), str(REPO)],
                check=True,
                capture_output=True,
            )
            (wheel,) = (work / "dist").glob("*.whl")
        index = args.index
        if index is None:
            log("building the sample index with this install")
            index = work / "idx"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "arag_mcp.indexer",
                    "build",
                    str(REPO / "examples" / "sample"),
                    "--index",
                    str(index),
                ],
                check=True,
                capture_output=True,
            )
        results: dict = {"wheel": wheel.name, "sizes": {}, "uvx": {}}
        uv_cache = work / "uv-cache"
        for name, extras in EXTRAS.items():
            log(f"installing {wheel.name}{extras}")
            results["sizes"][name] = installed_size(wheel, extras, work, uv_cache)
            print(json.dumps({name: results["sizes"][name]}), flush=True)
        uvx_cache = work / "uvx-cache"  # empty: the cold run downloads every dependency
        for run in ("cold", "warm"):
            log(f"uvx, {run}")
            env = environment(work / "home-uvx", uvx_cache)  # warm: the same user starting it again
            results["uvx"][run] = anyio.run(first_answers, wheel, index, env)
            print(json.dumps({f"uvx {run}": results["uvx"][run]}), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "install.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
