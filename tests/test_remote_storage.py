"""An index on object storage: the real CLIs and server against a local S3 server (moto)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from arag_mcp.indexer.index.ids import doc_key
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from .conftest import BUCKET, HASHED_MODEL, SAMPLE, CliResult, run_cli

boto3 = pytest.importorskip("boto3")

INDEX = f"s3://{BUCKET}/idx"
RADIUM = f"{doc_key('radium')}-0"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A copy of the bundled sample that the incremental test may change."""
    folder = tmp_path_factory.mktemp("remote") / "sample"
    shutil.copytree(SAMPLE, folder)
    return folder


@pytest.fixture(scope="module")
def s3_index(s3_endpoint: str, corpus: Path) -> str:
    result = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", INDEX, "--model", HASHED_MODEL, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "added 6, updated 0, removed 0, unchanged 0" in result.stderr
    return INDEX


def one_line_error(result: CliResult) -> str:
    """stderr of a command that failed with one line of explanation."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stderr.strip().count("\n") == 0, result.stderr
    return result.stderr


def test_build_writes_tables_and_manifest_to_the_bucket(s3_index: str):
    keys = {item["Key"] for item in boto3.client("s3").list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert "idx/manifest.json" in keys
    assert any(key.startswith("idx/chunks.lance/") for key in keys)
    assert any(key.startswith("idx/sentences.lance/") for key in keys)

    result = run_cli("arag_mcp.indexer", "info", "--index", s3_index)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["index"] == INDEX and info["counts"] == {"documents": 6, "chunks": 6, "sentences": 34}


def test_incremental_rebuild_embeds_only_the_changed_document(s3_index: str, corpus: Path):
    page = corpus / "pierre-curie.md"
    page.write_text(page.read_text() + "\nHe kept a notebook about piezoelectricity in his laboratory.\n")
    result = run_cli("arag_mcp.indexer", "build", str(corpus), "--index", s3_index, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "added 0, updated 1, removed 0, unchanged 5" in result.stderr

    result = run_cli("arag_mcp.indexer", "info", "--index", s3_index)
    assert json.loads(result.stdout)["counts"]["sentences"] == 35
    result = run_cli("arag_mcp.server", "--index", s3_index, "--call", "keyword_search", "keywords=notebook")
    assert result.returncode == 0, result.stderr
    assert "piezoelectricity" in result.stdout


@pytest.mark.anyio
async def test_server_serves_the_bucket_over_stdio(s3_index: str):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "arag_mcp.server", "--index", s3_index], env=dict(os.environ)
    )
    async with Client(stdio_client(params, errlog=sys.stderr)) as client:
        found = await client.call_tool("keyword_search", {"keywords": ["pitchblende"], "top_k": 3})
        assert not found.is_error, found.content[0].text
        assert [hit["chunk_id"] for hit in found.structured_content["results"]] == [RADIUM]

        semantic = await client.call_tool("semantic_search", {"query": "Which element glows faintly blue?"})
        assert not semantic.is_error, semantic.content[0].text
        assert semantic.structured_content["results"][0]["chunk_id"] == RADIUM

        read = await client.call_tool("chunk_read", {"chunk_ids": [RADIUM]})
        [chunk] = read.structured_content["chunks"]
        assert chunk["status"] == "ok" and chunk["text"].startswith("Radium is a chemical element")


def test_missing_bucket_or_prefix_is_one_line(s3_endpoint: str):
    missing_bucket = "s3://no-such-bucket/idx"
    result = run_cli(
        "arag_mcp.indexer", "build", str(SAMPLE), "--index", missing_bucket, "--model", HASHED_MODEL, "--quiet"
    )
    assert "bucket 'no-such-bucket' does not exist" in one_line_error(result)
    result = run_cli("arag_mcp.indexer", "info", "--index", missing_bucket)
    assert "bucket 'no-such-bucket' does not exist" in one_line_error(result)
    result = run_cli("arag_mcp.server", "--index", missing_bucket)
    assert "bucket 'no-such-bucket' does not exist" in one_line_error(result)

    missing_prefix = f"s3://{BUCKET}/nothing-here"
    result = run_cli("arag_mcp.indexer", "info", "--index", missing_prefix)
    assert "not an arag-mcp index" in one_line_error(result)
    result = run_cli("arag_mcp.server", "--index", missing_prefix)
    assert "not an arag-mcp index" in one_line_error(result)


def test_endpoint_variables(s3_index: str, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.setenv("AWS_ENDPOINT", s3_endpoint)
    result = run_cli("arag_mcp.indexer", "info", "--index", s3_index)
    assert result.returncode == 0, result.stderr

    monkeypatch.delenv("AWS_ALLOW_HTTP")
    result = run_cli("arag_mcp.indexer", "info", "--index", s3_index)
    assert "AWS_ALLOW_HTTP=true" in one_line_error(result)
