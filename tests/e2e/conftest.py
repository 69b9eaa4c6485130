"""Fixtures of the end-to-end tests that install the package as users do."""

from __future__ import annotations

from pathlib import Path

import pytest

from .installs import build_distributions


@pytest.fixture(scope="session")
def distributions(tmp_path_factory) -> tuple[Path, Path]:
    """The wheel and the sdist of this checkout, built once per run."""
    return build_distributions(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory) -> Path:
    """One uv cache for the run's installs: the first downloads the dependencies, the others reuse them."""
    return tmp_path_factory.mktemp("uv-cache")
