"""The keyword engine's one interface: every name the package offers is found in its module, and
asking for how words match (lower-cased text cut into words) loads nothing heavier."""

from __future__ import annotations

import importlib
import subprocess
import sys

from arag_mcp.indexer.index import keywords


def test_every_name_the_package_offers_resolves_and_nothing_else_does():
    assert sorted(keywords.__all__) == sorted(keywords._HOMES)
    for name, module in keywords._HOMES.items():
        assert getattr(keywords, name) is getattr(importlib.import_module(f"{keywords.__name__}.{module}"), name)
    try:
        keywords.invert
    except AttributeError as exc:
        assert "has no attribute 'invert'" in str(exc)
    else:
        raise AssertionError("a module's own name is not the package's")


def test_how_words_match_is_read_without_arrow_or_numpy():
    code = (
        "import sys\n"
        "from arag_mcp.indexer.index.keywords import KEYWORD_MATCHES, words_of\n"
        "assert words_of(['marie curie']) == [['marie', 'curie']]\n"
        "print(sorted(name for name in ('numpy', 'pyarrow', 'lancedb') if name in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
