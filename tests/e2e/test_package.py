"""The package: `python -m build` makes a wheel and an sdist of one version, and the wheel, run with
`uvx` or installed with `uv tool install` where nothing of this checkout is, answers over stdio from
an index built by another install (this checkout's), without torch or sentence-transformers."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from ..conftest import REPO
from .installs import assert_answers_from_the_sample, missing_modules, serve_and_ask, user_environment

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.slow
HEAVY = ("torch", "sentence_transformers")
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def wheel_metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        return Parser().parsestr(archive.read(name).decode())


def test_build_makes_a_wheel_and_an_sdist_of_the_one_version(distributions: tuple[Path, Path]):
    wheel, sdist = distributions
    assert wheel.name.startswith(f"arag_mcp-{VERSION}-py3-none-any")
    assert sdist.name == f"arag_mcp-{VERSION}.tar.gz"
    metadata = wheel_metadata(wheel)
    assert metadata["Version"] == VERSION
    assert "mcp-name: io.github." in metadata.get_payload(), "the PyPI description carries the registry's line"
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert f"arag_mcp-{VERSION}/pyproject.toml" in names and f"arag_mcp-{VERSION}/README.md" in names


def test_the_base_install_asks_for_neither_torch_nor_sentence_transformers(distributions: tuple[Path, Path]):
    """What the wheel requires outside its extras: stock pip or uv would otherwise fetch a CUDA build."""
    requirements = wheel_metadata(distributions[0]).get_all("Requires-Dist")
    base = [line for line in requirements if "extra ==" not in line]
    names = {re.match(r"[A-Za-z0-9._-]+", line).group().lower().replace("_", "-") for line in base}
    assert not names & {"torch", "sentence-transformers"}, base


def test_uvx_serves_an_index_built_by_another_install(
    distributions: tuple[Path, Path], sample_index: Path, uv_cache: Path, tmp_path: Path
):
    wheel = distributions[0]
    environment = user_environment(tmp_path, uv_cache)
    answers = serve_and_ask("uvx", ["--from", str(wheel), "arag-mcp", "--index", str(sample_index)], environment)
    assert_answers_from_the_sample(answers)
    probe = subprocess.run(
        ["uvx", "--from", str(wheel), "python", "-c", "import sys; print(sys.prefix)"],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert probe.returncode == 0, probe.stderr
    uvx_python = Path(probe.stdout.strip()) / "bin" / "python"
    assert missing_modules(uvx_python, environment, *HEAVY, "arag_mcp") == list(HEAVY)


def test_uv_tool_install_serves_an_index_built_by_another_install(
    distributions: tuple[Path, Path], sample_index: Path, uv_cache: Path, tmp_path: Path
):
    environment = user_environment(tmp_path, uv_cache)
    installed = subprocess.run(
        ["uv", "tool", "install", str(distributions[0])], capture_output=True, text=True, env=environment
    )
    assert installed.returncode == 0, installed.stderr
    command = tmp_path / "bin" / "arag-mcp"
    version = subprocess.run([str(command), "--version"], capture_output=True, text=True, env=environment)
    assert version.stdout.split() == ["arag-mcp", VERSION], version.stderr
    index_version = subprocess.run(
        [str(tmp_path / "bin" / "arag-index"), "--version"], capture_output=True, text=True, env=environment
    )
    assert index_version.stdout.split() == ["arag-index", VERSION], index_version.stderr
    answers = serve_and_ask(str(command), ["--index", str(sample_index)], environment)
    assert_answers_from_the_sample(answers)
    tool_python = tmp_path / "uv-tools" / "arag-mcp" / "bin" / "python"
    assert missing_modules(tool_python, environment, *HEAVY, "arag_mcp") == list(HEAVY)


PLACEHOLDER = "/ABSOLUTE/PATH/TO/"


def readme_host_commands() -> dict[str, list[str]]:
    """The commands the README gives hosts for a clone: its table's rows and its Desktop config."""
    readme = (REPO / "README.md").read_text()
    rows = dict(re.findall(r"^\| (from this clone[^|]*) \| `([^`]+)`", readme, re.MULTILINE))
    config = json.loads(re.search(r"```json\n(\{\n  \"mcpServers\".*?)\n```", readme, re.DOTALL).group(1))
    server = config["mcpServers"]["arag"]
    rows["desktop config"] = [server["command"], *server["args"]]
    return {name: command if isinstance(command, list) else command.split() for name, command in rows.items()}


def filled(words: list[str], index: Path, uvx: str) -> list[str]:
    places = {"uvx": uvx, "arag-mcp": str(REPO), "idx": str(index)}
    return [re.sub(re.escape(PLACEHOLDER) + r"([a-z-]+)", lambda m: places[m.group(1)], word) for word in words]


def test_the_readme_host_commands_for_a_clone_answer_as_a_gui_host_starts_them(
    sample_index: Path, uv_cache: Path, tmp_path: Path
):
    """Each command the README gives hosts for a clone (the clone's .venv, uvx from the clone, the
    Desktop config), placeholders filled, started as a GUI host starts it: from /, with neither the
    virtual environment nor uv on PATH."""
    commands = readme_host_commands()
    assert set(commands) == {
        "from this clone (the first command above)",
        "from this clone, through uv (nothing installed)",
        "desktop config",
    }
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    environment = user_environment(tmp_path / "home", uv_cache) | {"PATH": "/usr/bin:/bin"}
    uvx = str(tmp_path / "home" / "bin" / "uvx")
    for name, command in commands.items():
        words = filled(command, index, uvx)
        if "--index" not in words:
            words += ["--index", str(index)]
        assert Path(words[0]).is_absolute(), name
        answers = serve_and_ask(words[0], words[1:], environment, cwd=Path("/"))
        assert_answers_from_the_sample(answers)
