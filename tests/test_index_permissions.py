"""An index built by one user is served by another (a container's non-root user over a mounted
folder, a service account): its manifest is as readable as its tables, and one that is not is
refused with a line that says so, not taken for a missing index."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NOBODY = 65534
REPO = Path(__file__).resolve().parents[1]


def others_can_run_the_checkout() -> bool:
    """Whether another user can reach this checkout (its code and its venv): every folder above it
    must let others pass, which a checkout inside a private temporary folder does not."""
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in [REPO, *REPO.parents])


@pytest.fixture
def shared_index(sample_index: Path) -> Iterator[Path]:
    """A copy of the sample index in a folder every user may enter, and a cache folder any user may write."""
    with tempfile.TemporaryDirectory(prefix="arag-shared-") as folder:
        root = Path(folder)
        root.chmod(0o755)
        shutil.copytree(sample_index, root / "idx")
        (root / "cache").mkdir(mode=0o777)
        (root / "cache").chmod(0o777)
        yield root / "idx"


def test_the_manifest_is_readable_by_other_users(shared_index: Path):
    assert stat.S_IMODE((shared_index / "manifest.json").stat().st_mode) & 0o044 == 0o044


def serve_as_nobody(index: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HOME": str(index.parent / "cache"), "XDG_CACHE_HOME": str(index.parent / "cache")}
    return subprocess.run(
        [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            sys.executable,
            "-m",
            "arag_mcp.server",
            "--index",
            str(index),
            "--call",
            "semantic_search",
            "query=radium",
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="switching to another user needs root and setpriv",
)
@pytest.mark.skipif(
    not others_can_run_the_checkout(), reason="another user cannot reach this checkout (a folder above it is private)"
)
def test_another_user_serves_the_index_and_is_told_when_it_cannot_read_it(shared_index: Path):
    served = serve_as_nobody(shared_index)
    assert served.returncode == 0, served.stderr
    assert "radium" in served.stdout.lower()
    (shared_index / "manifest.json").chmod(0o600)
    refused = serve_as_nobody(shared_index)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "manifest.json is not readable by this user" in refused.stderr, refused.stderr
