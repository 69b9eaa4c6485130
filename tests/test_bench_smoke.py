"""The benchmarks' --quick modes run end to end (skipped without the shared benchmark data)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import BENCH_DATA, REPO

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not BENCH_DATA.exists(), reason="shared bench-data not present")]


def run_bench(script: str, out: Path) -> dict:
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out.read_text())


def test_quality_quick(tmp_path: Path):
    results = run_bench("quality.py", tmp_path / "quality.json")["results"]
    for dataset in ("musique", "2wikimultihopqa"):
        agreement = results[dataset]["brute_force_agreement"]
        assert set(agreement.values()) == {100.0} and len(agreement) == 4
        assert 0 < results[dataset]["semantic"]["recall@5"] <= 100


def test_speed_quick(tmp_path: Path):
    results = run_bench("speed.py", tmp_path / "speed.json")
    for words in ("1 keywords", "2 keywords", "3 keywords"):
        for match in ("", " (substring)"):
            assert results["chunks-10k"]["keyword_search"][words + match]["identical"] == "50/50"
        side_by_side = results["chunks-10k"]["keyword_search"][words]
        assert side_by_side["ranking_only_same_as_keyword_search"] == "50/50"
        assert side_by_side["top5_agreement_with_definition"]["ranking_only"] == 1.0
        assert 0 < side_by_side["top5_agreement_with_definition"]["lancedb_fts"] <= 1
    for name, sentences in (("chunks-1k", 10_000), ("chunks-10k", 100_000)):
        assert results[name]["semantic_search"]["sentences"] == sentences
        assert results[name]["semantic_search"]["exact_in_memory"] is True
        assert results[name]["semantic_search"]["recall@10_vs_exact"] == 1.0
        assert results[name]["server"]["peak_rss_mb"] > 0
    assert results["build"].keys() == {"torch", "onnx", "onnx-int8"}
    assert all(build["sentences_per_s"] > 0 for build in results["build"].values())
    assert results["build"]["torch"]["speedup_vs_torch"] == 1.0
