"""`arag-index --ray` into an object store: workers write their fragments straight to the bucket
(a local S3 server, moto) and the build lands as a local build of the same sources does.

A module of its own: its local Ray starts after the S3 variables are set, so its workers inherit
them, as a cluster's nodes must have the credentials (docs/serving.md, "Beyond one machine")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.manifest import read_manifest
from arag_mcp.indexer.indexes import Index

from ..conftest import BUCKET
from .same_index import assert_same_index, corpus_with_notes

ray = pytest.importorskip("ray")
pytest.importorskip("lance")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_with_s3(s3_endpoint: str) -> Iterator[None]:
    ray.init(num_cpus=2, object_store_memory=100 * 2**20, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_build_into_a_bucket_equals_a_local_build(tmp_path: Path, ray_with_s3: None):
    corpus = corpus_with_notes(tmp_path / "docs", 70)
    index = f"s3://{BUCKET}/ray-idx"
    on_ray = Index(index).add([corpus], BuildOptions(progress=False, ray="local"))
    local = Index(str(tmp_path / "local")).add([corpus], BuildOptions(progress=False))
    assert (on_ray.added, on_ray.documents, on_ray.sentences) == (local.added, local.documents, local.sentences)
    assert_same_index(index, tmp_path / "local")

    (corpus / "note-000.txt").write_text("Note 0 was rewritten. It now says something else.")
    again = Index(index).add([corpus], BuildOptions(progress=False, ray="local"))
    assert (again.added, again.updated, again.removed, again.embedded_sentences) == (0, 1, 0, 2)
    Index(str(tmp_path / "local")).add([corpus], BuildOptions(progress=False))
    assert_same_index(index, tmp_path / "local")
    assert read_manifest(index)["counts"]["documents"] == 76
