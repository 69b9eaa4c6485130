"""A running server picks up a completed build without a restart or a failed answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest
from arag_mcp.indexer.build import BuildOptions, build_index
from arag_mcp.indexer.ids import doc_key

from .conftest import SAMPLE
from .mcp_helpers import stdio_client_for

pytestmark = pytest.mark.anyio


async def test_queries_in_a_loop_while_an_incremental_build_lands(tmp_path: Path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    index = tmp_path / "idx"
    build_index([corpus], str(index), BuildOptions(progress=False))
    radium = f"{doc_key('radium')}-0"

    async with stdio_client_for(index, "auto") as client:
        first = await client.call_tool("chunk_read", {"chunk_ids": [radium]})
        assert first.structured_content["chunks"][0]["status"] == "ok"
        session = first.structured_content["session"]

        (corpus / "einsteinium.md").write_text(
            "# Einsteinium\n\nEinsteinium was found in the debris of the Ivy Mike test in 1952."
        )
        answers = []
        async with anyio.create_task_group() as group:
            group.start_soon(
                anyio.to_thread.run_sync, lambda: build_index([corpus], str(index), BuildOptions(progress=False))
            )
            for _ in range(400):
                result = await client.call_tool("keyword_search", {"keywords": ["Ivy Mike", "pitchblende"], "top_k": 5})
                assert not result.is_error, result.content[0].text
                titles = {hit["title"] for hit in result.structured_content["results"]}
                answers.append(titles)
                if "Einsteinium" in titles:
                    break
                await anyio.sleep(0.05)
        assert answers[0] == {"Radium"}
        assert answers[-1] == {"Radium", "Einsteinium"}
        assert all(titles in ({"Radium"}, {"Radium", "Einsteinium"}) for titles in answers)

        again = await client.call_tool("chunk_read", {"chunk_ids": [radium], "session": session})
        assert again.structured_content["chunks"][0]["status"] == "read_before"
