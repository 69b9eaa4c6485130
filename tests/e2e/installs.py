"""Installing the built package the way users do (uvx, uv tool install, a Claude Desktop bundle) in an
environment that has uv and nothing of this checkout, and talking to what it serves over stdio."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from ..conftest import REPO

INSTALL_TIMEOUT = 900
"""Seconds a cold install (every dependency downloaded) and the first answers may take."""


def build_distributions(outdir: Path) -> tuple[Path, Path]:
    """`python -m build` of this checkout: its wheel and its sdist (the wheel built from the sdist)."""
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(outdir), str(REPO)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (wheel,) = outdir.glob("*.whl")
    (sdist,) = outdir.glob("*.tar.gz")
    return wheel, sdist


def user_environment(home: Path, uv_cache: Path) -> dict[str, str]:
    """The environment of a user who has uv and Python and nothing of this checkout: no virtual
    environment on PATH, uv's cache, tools and configuration, and the servers' caches, under HOME."""
    tools = home / "bin"
    tools.mkdir(parents=True, exist_ok=True)
    for command in ("uv", "uvx"):
        found = shutil.which(command)
        assert found, f"{command} is not installed: pip install -e '.[test]'"
        (tools / command).symlink_to(found)
    own_bin = str(Path(sys.prefix) / "bin")
    path = [str(tools), *(entry for entry in os.environ["PATH"].split(os.pathsep) if entry != own_bin)]
    dropped = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "ARAG_MCP_CACHE", "XDG_CACHE_HOME")
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in dropped and not name.startswith(("UV_", "ARAG_"))
    }
    base_python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    environment.update(
        PATH=os.pathsep.join(path),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        UV_CACHE_DIR=str(uv_cache),
        UV_TOOL_DIR=str(home / "uv-tools"),
        UV_TOOL_BIN_DIR=str(tools),
        UV_PYTHON=str(base_python),
        UV_PYTHON_DOWNLOADS="never",
        UV_NO_CONFIG="1",
    )
    return environment


def missing_modules(python: Path | str, environment: dict[str, str], *modules: str) -> list[str]:
    """Which of MODULES the interpreter PYTHON cannot import (found by their specs, nothing imported)."""
    probe = f"import importlib.util as u; print(' '.join(m for m in {list(modules)!r} if u.find_spec(m) is None))"
    result = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=environment)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def serve_and_ask(command: str, args: list[str], environment: dict[str, str], cwd: Path | None = None) -> dict:
    """Start the server as a host does, over stdio, and ask it: the tools it lists and the answers to
    a keyword search and a semantic search over the sample corpus."""

    async def ask() -> dict:
        server = StdioServerParameters(command=command, args=args, env=environment, cwd=cwd)
        with anyio.fail_after(INSTALL_TIMEOUT):
            async with Client(server) as client:
                tools = [tool.name for tool in (await client.list_tools()).tools]
                keyword = await client.call_tool("keyword_search", {"keywords": ["radium"]})
                semantic = await client.call_tool("semantic_search", {"query": "Which element is named after Poland?"})
        return {"tools": tools, "keyword": keyword, "semantic": semantic}

    return anyio.run(ask)


def assert_answers_from_the_sample(answers: dict) -> None:
    assert sorted(answers["tools"]) == ["chunk_read", "keyword_search", "semantic_search"]
    for name in ("keyword", "semantic"):
        result = answers[name]
        assert not result.is_error, result.content[0].text
    assert "radium" in answers["keyword"].content[0].text.lower()
    assert "polonium" in answers["semantic"].content[0].text.lower()
