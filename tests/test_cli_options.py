"""Both commands' conventions, through `main(argv)` in process: --version, log levels in any case, options from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_cli

MODULES = ("arag_mcp.indexer", "arag_mcp.server")


@pytest.mark.parametrize("module", MODULES)
def test_version(module: str):
    result = run_cli(module, "--version")
    assert result.returncode == 0 and result.stdout.split()[1][0].isdigit(), result.stderr


def test_index_and_log_level_from_the_environment(sample_index: Path):
    env = {"ARAG_MCP_INDEX": str(sample_index)}
    listed = run_cli("arag_mcp.indexer", "list", "--log-level", "debug", env=env)
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 6
    called = run_cli(
        "arag_mcp.server", "--call", "keyword_search", "keywords=radium", env={**env, "ARAG_MCP_LOG_LEVEL": "debug"}
    )
    assert called.returncode == 0, called.stderr
    assert "radium" in called.stdout.lower() and "DEBUG" in called.stderr


def test_a_bad_environment_value_is_a_usage_error_naming_the_variable(sample_index: Path):
    result = run_cli(
        "arag_mcp.server",
        "--call",
        "keyword_search",
        "keywords=x",
        env={"ARAG_MCP_INDEX": str(sample_index), "ARAG_MCP_PORT": "eighty"},
    )
    assert result.returncode == 2 and "ARAG_MCP_PORT='eighty'" in result.stderr and "Traceback" not in result.stderr
    result = run_cli(
        "arag_mcp.indexer", "list", env={"ARAG_MCP_INDEX": str(sample_index), "ARAG_INDEX_LOG_LEVEL": "loud"}
    )
    assert result.returncode == 2 and "ARAG_INDEX_LOG_LEVEL='loud'" in result.stderr


@pytest.mark.parametrize(("module", "args"), [("arag_mcp.indexer", ("add", "--help")), ("arag_mcp.server", ())])
def test_help_names_the_variables(module: str, args: tuple[str, ...]):
    result = run_cli(module, *args, "--help")
    assert result.returncode == 0
    assert "ARAG_MCP_INDEX" in result.stdout and "LOG_LEVEL" in result.stdout
