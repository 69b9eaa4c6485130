"""The Claude Desktop bundle: validated and packed by @anthropic-ai/mcpb, then unpacked and started the
way Desktop starts it (its mcp_config, with ${__dirname} and ${user_config.*} filled in) by a user
who has uv; it answers over stdio from an index built by another install."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ..conftest import REPO
from .installs import assert_answers_from_the_sample, serve_and_ask, user_environment

pytestmark = pytest.mark.slow
BUNDLE = REPO / "bundle"
MCPB = ["npx", "--yes", "@anthropic-ai/mcpb@2.1.2"]


@pytest.fixture(scope="module")
def mcpb() -> list[str]:
    if shutil.which("npx") is None:
        pytest.skip("needs Node.js's npx to run @anthropic-ai/mcpb")
    return MCPB


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=600)


def test_the_validator_accepts_the_manifest_and_refuses_a_broken_one(mcpb: list[str], tmp_path: Path):
    accepted = run([*mcpb, "validate", str(BUNDLE / "manifest.json")], tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    broken = json.loads((BUNDLE / "manifest.json").read_text())
    broken["user_config"]["index"]["type"] = "folder"
    (tmp_path / "manifest.json").write_text(json.dumps(broken))
    refused = run([*mcpb, "validate", str(tmp_path / "manifest.json")], tmp_path)
    assert refused.returncode != 0 and "type" in refused.stdout + refused.stderr


def desktop_launch(manifest: dict, folder: Path, settings: dict[str, str]) -> tuple[str, list[str], dict[str, str]]:
    """The command, arguments and environment Desktop starts: mcp_config with ${__dirname} the unpacked
    bundle and each ${user_config.KEY} the user's setting, or the manifest's default."""
    values = {key: option.get("default") for key, option in manifest["user_config"].items()} | settings

    def fill(text: str) -> str:
        text = text.replace("${__dirname}", str(folder))
        return re.sub(r"\$\{user_config\.([a-z_]+)\}", lambda match: str(values[match.group(1)]), text)

    config = manifest["server"]["mcp_config"]
    return (
        fill(config["command"]),
        [fill(arg) for arg in config["args"]],
        {k: fill(v) for k, v in config["env"].items()},
    )


def test_the_packed_bundle_answers_as_desktop_starts_it(
    mcpb: list[str], distributions: tuple[Path, Path], sample_index: Path, uv_cache: Path, tmp_path: Path
):
    packed = tmp_path / "arag-mcp.mcpb"
    result = run([*mcpb, "pack", str(BUNDLE), str(packed)], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    unpacked = tmp_path / "Claude Extensions" / "arag-mcp"  # where Desktop unpacks it: a path with a space
    with zipfile.ZipFile(packed) as archive:
        assert sorted(archive.namelist()) == ["manifest.json", "pyproject.toml", "server/main.py"]
        archive.extractall(unpacked)
    manifest = json.loads((unpacked / "manifest.json").read_text())
    command, args, variables = desktop_launch(manifest, unpacked, {"index": str(sample_index)})
    environment = user_environment(tmp_path / "home", uv_cache)
    # The wheel is not on PyPI: uv finds it beside the dependencies it downloads from there.
    environment["UV_FIND_LINKS"] = str(distributions[0].parent)
    answers = serve_and_ask(command, args, environment | variables)
    assert_answers_from_the_sample(answers)


def test_the_bundle_carrying_its_wheel_answers_with_no_index_offering_arag_mcp(
    mcpb: list[str], distributions: tuple[Path, Path], sample_index: Path, uv_cache: Path, tmp_path: Path
):
    """bundle/pack_with_wheel.py: Desktop's uv takes arag-mcp from the bundle and only its dependencies
    from the package index, which has no arag-mcp (no find-links, no other index)."""
    packed = tmp_path / "arag-mcp.mcpb"
    result = run(
        [sys.executable, str(BUNDLE / "pack_with_wheel.py"), "--wheel", str(distributions[0]), "--out", str(packed)],
        tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    unpacked = tmp_path / "Claude Extensions" / "arag-mcp"
    with zipfile.ZipFile(packed) as archive:
        assert sorted(archive.namelist()) == [
            "manifest.json",
            "pyproject.toml",
            "server/main.py",
            f"wheels/{distributions[0].name}",
        ]
        archive.extractall(unpacked)
    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest == json.loads((BUNDLE / "manifest.json").read_text())
    command, args, variables = desktop_launch(manifest, unpacked, {"index": str(sample_index)})
    environment = {
        name: value
        for name, value in user_environment(tmp_path / "home", uv_cache).items()
        if not name.startswith("PIP_")
    }
    assert not {"UV_FIND_LINKS", "UV_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL"} & set(environment)
    answers = serve_and_ask(command, args, environment | variables, cwd=Path("/"))
    assert_answers_from_the_sample(answers)
