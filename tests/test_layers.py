"""The layers of the code, kept honest: the import contracts in pyproject.toml, and no import cycle."""

from __future__ import annotations

import logging
from pathlib import Path

import grimp
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arag_mcp.indexer", "arag_mcp.server", "arag_mcp.agent")


def test_import_contracts_hold() -> None:
    """import-linter configures logging in a way that disables every logger already made: those are
    enabled again, or later tests would see none of this project's log records."""
    existing = [logger for logger in logging.root.manager.loggerDict.values() if isinstance(logger, logging.Logger)]
    enabled = [logger for logger in existing if not logger.disabled]
    try:
        assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True) == 0
    finally:
        for logger in enabled:
            logger.disabled = False


def test_no_import_cycle() -> None:
    """A module that reaches itself through its imports (imports only for type checking count)."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    cycles = sorted(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if imported != module and graph.chain_exists(importer=imported, imported=module)
    )
    assert cycles == []
