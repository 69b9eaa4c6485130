"""The commands' conventions, through `main(argv)` in process: --version, log levels in any case, options from
the environment, the flags each command shows, and the subcommands listed when a command runs bare."""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from .conftest import run_cli

MODULES = ("arag_mcp.indexer", "arag_mcp.server")


@pytest.mark.parametrize("module", MODULES)
def test_version(module: str):
    result = run_cli(module, "--version")
    assert result.returncode == 0 and result.stdout.split()[1][0].isdigit(), result.stderr


def test_index_and_log_level_from_the_environment(hashed_sample_index: Path):
    env = {"ARAG_MCP_INDEX": str(hashed_sample_index)}
    listed = run_cli("arag_mcp.indexer", "list", "--log-level", "debug", env=env)
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 6
    called = run_cli(
        "arag_mcp.server", "--call", "keyword_search", "keywords=radium", env={**env, "ARAG_MCP_LOG_LEVEL": "debug"}
    )
    assert called.returncode == 0, called.stderr
    assert "radium" in called.stdout.lower() and "DEBUG" in called.stderr


def test_a_bad_environment_value_is_a_usage_error_naming_the_variable(hashed_sample_index: Path):
    result = run_cli(
        "arag_mcp.server",
        "--call",
        "keyword_search",
        "keywords=x",
        env={"ARAG_MCP_INDEX": str(hashed_sample_index), "ARAG_MCP_PORT": "eighty"},
    )
    assert result.returncode == 2 and "ARAG_MCP_PORT='eighty'" in result.stderr and "Traceback" not in result.stderr
    result = run_cli(
        "arag_mcp.indexer", "list", env={"ARAG_MCP_INDEX": str(hashed_sample_index), "ARAG_INDEX_LOG_LEVEL": "loud"}
    )
    assert result.returncode == 2 and "ARAG_INDEX_LOG_LEVEL='loud'" in result.stderr


@pytest.mark.parametrize(("module", "args"), [("arag_mcp.indexer", ("add", "--help")), ("arag_mcp.server", ())])
def test_help_names_the_variables(module: str, args: tuple[str, ...]):
    result = run_cli(module, *args, "--help")
    assert result.returncode == 0
    assert "ARAG_MCP_INDEX" in result.stdout and "LOG_LEVEL" in result.stdout


def test_each_command_shows_the_flags_that_mean_something_there():
    shown = {
        command: run_cli("arag_mcp.indexer", command, "--help").stdout
        for command in ("add", "build", "sync", "watch", "describe")
    }
    assert "--commit-seconds" in shown["add"] and "--strict" in shown["sync"] and "--ray" in shown["build"]
    assert not any(flag in shown["watch"] for flag in ("--ray", "--strict", "--quiet"))
    assert [command for command, text in shown.items() if "--description" in text or "TEXT" in text] == ["describe"]
    assert not any(
        flag in text for text in shown.values() for flag in ("--write-batch", "--commit-every", "--batch-size")
    )
    hidden_still_taken = run_cli("arag_mcp.indexer", "sync", "--index", "/nonexistent", "--write-batch", "16")
    assert "unrecognized arguments" not in hidden_still_taken.stderr
    assert "is not an arag-mcp index" in hidden_still_taken.stderr


@pytest.mark.parametrize(
    ("command", "listed"),
    [("arag-agent", ("ask",)), ("arag-eval", ("run", "compare"))],
)
def test_an_agent_command_run_bare_lists_its_subcommands_as_arag_index_does(command: str, listed: tuple[str, ...]):
    from arag_mcp.agent.cli import agent_main, eval_main

    errors = io.StringIO()
    with redirect_stderr(errors), pytest.raises(SystemExit) as exited:
        {"arag-agent": agent_main, "arag-eval": eval_main}[command]([])
    assert exited.value.code == 2
    assert all(f"    {name} " in errors.getvalue() for name in listed), errors.getvalue()
    assert "required" not in errors.getvalue()
