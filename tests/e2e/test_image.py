"""The image: built from the Dockerfile and run by a container engine (podman, else docker), it
serves an index over streamable HTTP on 0.0.0.0 only with a bearer token, answers /health, runs as a
non-root user with the registry's label, and serves over stdio as the registry entry starts it.

Where no engine can pull the base image and run a container, the tests skip, saying why.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters

from ..conftest import REPO
from ..mcp_helpers import free_port, http_client

pytestmark = [pytest.mark.slow]
BASE_IMAGE = "python:3.11-slim-bookworm"
"""The Dockerfile's base: pulling it and running Python in it is the probe of a working engine."""
TOKEN = "image-test-token"


@functools.cache
def working_engine() -> tuple[str | None, str]:
    """The first engine that runs a container here, or None and what went wrong with each."""
    engines = [name for name in ("podman", "docker") if shutil.which(name)]
    if not engines:
        return None, "no container engine (podman or docker) is installed"
    failures = []
    for engine in engines:
        probe = subprocess.run(
            [engine, "run", "--rm", BASE_IMAGE, "python", "-c", "print('ok')"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if probe.returncode == 0 and probe.stdout.strip() == "ok":
            return engine, ""
        lines = (probe.stderr or probe.stdout).strip().splitlines() or [f"exit status {probe.returncode}"]
        failures.append(f"{engine}: {next((line for line in lines if 'rror' in line or 'annot' in line), lines[-1])}")
    return None, "no container engine can run a container here: " + "; ".join(failures)


@pytest.fixture(scope="module")
def image() -> Iterator[tuple[str, str]]:
    engine, failures = working_engine()
    if engine is None:
        pytest.skip(failures)
    tag = f"arag-mcp-test:{uuid.uuid4().hex[:8]}"
    built = subprocess.run([engine, "build", "-t", tag, str(REPO)], capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    yield engine, tag
    subprocess.run([engine, "rmi", "-f", tag], capture_output=True)


def test_the_image_has_the_label_a_healthcheck_and_a_non_root_user(image: tuple[str, str]):
    engine, tag = image
    inspected = json.loads(subprocess.run([engine, "image", "inspect", tag], capture_output=True, text=True).stdout)[0]
    config = inspected.get("Config") or inspected["config"]
    expected = json.loads((REPO / "server.json").read_text())["name"]
    assert config["Labels"]["io.modelcontextprotocol.server.name"] == expected
    assert "/health" in " ".join(config["Healthcheck"]["Test"])
    user = subprocess.run([engine, "run", "--rm", "--entrypoint", "id", tag, "-u"], capture_output=True, text=True)
    assert user.returncode == 0 and user.stdout.strip() not in ("", "0"), user.stdout + user.stderr


def test_the_image_refuses_to_serve_without_a_token(image: tuple[str, str], sample_index: Path):
    engine, tag = image
    result = subprocess.run(
        [engine, "run", "--rm", "-v", f"{sample_index}:/index:ro", tag], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 2
    assert "needs a bearer token" in result.stderr and "Traceback" not in result.stderr


def test_the_image_serves_streamable_http_with_a_token(image: tuple[str, str], sample_index: Path):
    engine, tag = image
    port = free_port()
    name = f"arag-mcp-test-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        [
            engine,
            "run",
            "-d",
            "--name",
            name,
            "-p",
            f"127.0.0.1:{port}:8000",
            "-v",
            f"{sample_index}:/index:ro",
            "-e",
            f"ARAG_MCP_AUTH_TOKEN={TOKEN}",
            tag,
        ],
        check=True,
        capture_output=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx2.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            logs = subprocess.run([engine, "logs", name], capture_output=True, text=True)
            assert time.monotonic() < deadline, logs.stdout + logs.stderr
            time.sleep(0.5)
        assert httpx2.post(f"{base}/mcp", json={}, timeout=5).status_code == 401

        async def ask() -> str:
            async with http_client(base, "streamable-http", "auto", token=TOKEN) as client:
                found = await client.call_tool("keyword_search", {"keywords": ["radium"]})
                return found.content[0].text

        assert "radium" in anyio.run(ask).lower()
        if engine == "podman":  # docker runs the HEALTHCHECK only on its own schedule
            health = subprocess.run([engine, "healthcheck", "run", name], capture_output=True, text=True)
            assert health.returncode == 0, health.stdout + health.stderr
    finally:
        subprocess.run([engine, "rm", "-f", name], capture_output=True)


def test_the_image_serves_stdio_as_the_registry_entry_starts_it(image: tuple[str, str], sample_index: Path):
    engine, tag = image
    server = StdioServerParameters(
        command=engine,
        args=[
            "run",
            "-i",
            "--rm",
            "--mount",
            f"type=bind,src={sample_index},dst=/index,readonly",
            tag,
            "--transport",
            "stdio",
        ],
    )

    async def ask() -> list[str]:
        with anyio.fail_after(300):
            async with Client(server) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    assert sorted(anyio.run(ask)) == ["chunk_read", "keyword_search", "semantic_search"]
