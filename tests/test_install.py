"""The README's first two commands are what CI runs, and what they install is complete with the pip
a fresh virtual environment ships (pip < 24 ignores justext's `lxml[html_clean]` extra)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def test_the_html_cleaner_that_trafilatura_needs_is_installed():
    result = subprocess.run(
        [sys.executable, "-c", "import justext, trafilatura; from lxml.html.clean import Cleaner"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def _ci_run(tmp_path: Path, readme: str) -> subprocess.CompletedProcess[str]:
    """.ci/run in a copy of the repository whose README.md is `readme`."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "README.md").write_text(readme)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "faketime").symlink_to(shutil.which("true"))  # present, so .ci/run installs nothing
    environment = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", ".ci/run"], cwd=tmp_path, capture_output=True, text=True, env=environment)


def test_ci_runs_the_readme_first_two_bash_blocks_in_order_and_nothing_else(tmp_path: Path):
    readme = (
        "# x\n\n```bash\necho one >> ran\n```\n\ntext\n\n```python\nprint('no')\n```\n\n"
        "```bash\necho two >> ran &&\n  echo two-b >> ran\n```\n\n```bash\necho three >> ran\n```\n"
    )
    result = _ci_run(tmp_path, readme)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ran").read_text().split() == ["one", "two", "two-b"]


def test_ci_fails_when_a_readme_command_fails(tmp_path: Path):
    result = _ci_run(tmp_path, "```bash\nfalse && echo never\n```\n\n```bash\necho second >> ran\n```\n")
    assert result.returncode != 0
    assert not (tmp_path / "ran").exists()


def test_ci_runs_the_readme_of_this_repository():
    script = (REPO / ".ci" / "run").read_text()
    assert "README.md" in script
    assert "python -m pytest -q -m slow tests/e2e" in script, (
        "CI also runs the end-to-end tests the README's suite leaves out"
    )
    assert not re.search(r"\bpip\b", script), "CI installs only what the README's commands install"
