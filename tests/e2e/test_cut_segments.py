"""A real server process over stdio whose keyword segment files are cut short under it, one after the
other, while it answers (as a copy of another index over the served one would): no call ends in a
signal; a call that needs a cut file is one line naming sync, one that does not answers (semantic
search reads no postings, and chunk texts from the chunks table once the texts file is found cut),
and after `arag-index sync` the server serves the segments written again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from arag_mcp.indexer.index.keywords.segment_store import FOLDER
from arag_mcp.indexer.index.keywords.segments import FILES
from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
SEARCHES = (["radium"], ["Marie Curie", "polonium"], ["Poland"])


def answer(result) -> str:  # noqa: ANN001 - the SDK's result
    """The text of a result without its conversation line, which differs call by call."""
    return "\n".join(line for line in result.content[0].text.splitlines() if "conversation" not in line)


async def test_every_segment_file_cut_short_under_a_running_server(sample_index: Path, tmp_path: Path):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    [segment] = [folder for folder in (index / FOLDER).iterdir() if folder.is_dir()]
    server = StdioServerParameters(command=sys.executable, args=["-m", "arag_mcp.server", "--index", str(index)])
    with anyio.fail_after(300):
        async with Client(server) as client:
            before = [answer(await client.call_tool("keyword_search", {"keywords": k})) for k in SEARCHES]
            refused = []
            for name in FILES:
                path = segment / name
                path.chmod(0o644)
                os.truncate(path, path.stat().st_size // 2)
                for keywords in SEARCHES:
                    found = await client.call_tool("keyword_search", {"keywords": keywords})
                    text = found.content[0].text
                    if found.is_error:
                        assert "\n" not in text.strip() and "arag-index sync" in text, text
                        refused.append(name)
                semantic = await client.call_tool("semantic_search", {"query": "Which element is named after Poland?"})
                text = semantic.content[0].text
                # semantic search reads no postings, and chunk texts from the chunks table where the
                # texts file is refused
                assert not semantic.is_error and "polonium" in text.lower(), text
            assert {"terms.arrow", "texts.arrow"} <= set(refused), refused

            synced = subprocess.run(
                [sys.executable, "-m", "arag_mcp.indexer", "sync", "--index", str(index), "--quiet"],
                capture_output=True,
                text=True,
            )
            assert synced.returncode == 0 and "writing the keyword segments again" in synced.stderr, synced.stderr
            deadline = time.monotonic() + 60
            while True:
                after = [await client.call_tool("keyword_search", {"keywords": k}) for k in SEARCHES]
                if not any(result.is_error for result in after):
                    break
                assert time.monotonic() < deadline, after[0].content[0].text
                await anyio.sleep(0.5)
            assert [answer(result) for result in after] == before
