"""A running server picks up a completed build without a restart or a failed answer."""

from __future__ import annotations

import gc
import logging
import shutil
import threading
import time
import weakref
from pathlib import Path

import anyio
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.ids import doc_key
from arag_mcp.indexer.index.manifest import check_manifest, write_manifest
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.live_index import LiveIndex
from mcp import Client

from .conftest import HASHED_MODEL, SAMPLE, live_index

pytestmark = pytest.mark.anyio


async def test_queries_in_a_loop_while_an_incremental_build_lands(tmp_path: Path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    index = tmp_path / "idx"
    Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
    radium = f"{doc_key('radium')}-0"

    with live_index(index) as live:
        async with Client(create_server(live), mode="auto") as client:
            first = await client.call_tool("chunk_read", {"chunk_ids": [radium]})
            assert first.structured_content["chunks"][0]["status"] == "ok"
            conversation = first.structured_content["conversation"]

            (corpus / "einsteinium.md").write_text(
                "# Einsteinium\n\nEinsteinium was found in the debris of the Ivy Mike test in 1952."
            )
            answers = []
            async with anyio.create_task_group() as group:
                group.start_soon(
                    anyio.to_thread.run_sync,
                    lambda: Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False)),
                )
                for _ in range(400):
                    result = await client.call_tool(
                        "keyword_search", {"keywords": ["Ivy Mike", "pitchblende"], "top_k": 5}
                    )
                    assert not result.is_error, result.content[0].text
                    titles = {hit["title"] for hit in result.structured_content["results"]}
                    answers.append(titles)
                    if "Einsteinium" in titles:
                        break
                    await anyio.sleep(0.05)
            assert answers[0] == {"Radium"}
            assert answers[-1] == {"Radium", "Einsteinium"}
            assert all(titles in ({"Radium"}, {"Radium", "Einsteinium"}) for titles in answers)

            again = await client.call_tool("chunk_read", {"chunk_ids": [radium], "conversation": conversation})
            assert again.structured_content["chunks"][0]["status"] == "read_before"


def test_each_build_s_vectors_are_read_on_one_thread_and_a_replaced_build_is_freed(tmp_path: Path, caplog):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    index = str(tmp_path / "idx")
    manifests = []
    for extra in ("", "\n\nRadium paint was used on watch dials."):
        (corpus / "marie-curie.md").write_text((SAMPLE / "marie-curie.md").read_text() + extra)
        Index(index).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
        manifests.append(check_manifest(index))
    readers: list[int] = []

    def note_reader(record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("sentence vectors in memory"):
            readers.append(threading.get_native_id())
        return True

    caplog.set_level(logging.INFO, logger="arag_mcp.indexer.index.vectors")
    logging.getLogger("arag_mcp.indexer.index.vectors").addFilter(note_reader)
    with live_index(index, reload_seconds=0, load_model=False) as live:
        try:
            replaced = weakref.ref(live.snapshot())
            for number in range(4):
                write_manifest(manifests[number % 2])
                served = live.snapshot()
                assert served is not replaced()
                deadline = time.monotonic() + 60
                while len(readers) <= number and time.monotonic() < deadline:
                    time.sleep(0.05)
                gc.collect()
                assert replaced() is None, "a replaced build is still referenced"
                replaced = weakref.ref(served)
                del served
        finally:
            logging.getLogger("arag_mcp.indexer.index.vectors").removeFilter(note_reader)
    assert len(readers) == 4 and len(set(readers)) == 1, readers


@pytest.mark.parametrize("load_model", [False, True])
def test_close_returns_once_the_opening_and_the_loads_it_started_are_done(hashed_sample_index: Path, load_model: bool):
    """A process closes its LiveIndex before it exits: no thread may then still be inside LanceDB or
    ONNX Runtime, as the opening is when a call fails before it needs the index."""
    live = LiveIndex(str(hashed_sample_index))
    live.start(load_model=load_model)
    live.close()
    assert not any(thread.name == "arag-open" and thread.is_alive() for thread in threading.enumerate())
    assert all(ready.is_set() for ready in live._ready.values())
    assert len(live._ready) == load_model and live._reads_queued == 0
