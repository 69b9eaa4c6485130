"""Where an index lives (stores.py), chosen once per URI: what the rest of the code asks a store, on
a real folder, and on an object store stood in for by one held in memory (reads that come back cut
while a manifest is replaced, as an object store's can)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest
from arag_mcp.indexer.index import manifest as manifest_module
from arag_mcp.indexer.index.errors import IndexBusy, IndexStoreError
from arag_mcp.indexer.index.manifest import (
    FORMAT,
    MANIFEST_FILE,
    Manifest,
    check_manifest,
    read_manifest,
    write_manifest,
)
from arag_mcp.indexer.index.store_reads import StoreState
from arag_mcp.indexer.index.stores import OBJECT_READS, LocalStore, ObjectStore, open_store


class HeldObjects:
    """An object store held in memory: each read of a file returns the next of the bodies queued
    for it (the last one again once the queue is down to it), as an object replaced while it is
    read comes back cut and whole afterwards."""

    manifest_reads = OBJECT_READS
    folder = None

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.bodies: dict[str, list[bytes]] = {}
        self.reads = 0

    def read_file(self, name: str) -> bytes | None:
        self.reads += 1
        queued = self.bodies.get(name)
        if not queued:
            return None
        return queued.pop(0) if len(queued) > 1 else queued[0]

    def write_file(self, name: str, raw: bytes) -> None:
        self.bodies[name] = [raw]

    def missing(self) -> str | None:
        return None

    def lock(self, wait: bool = True) -> AbstractContextManager[None]:
        return nullcontext()  # an object store relies on the manifest's commit

    def prepare(self) -> None:
        pass

    def read(self, fetch: Callable):  # noqa: ANN201
        return fetch()

    def unanswered(self, exc: BaseException) -> bool:
        return False

    def state(self) -> StoreState | None:
        return None


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldObjects:
    store = HeldObjects("s3://bucket/index")
    monkeypatch.setattr(manifest_module, "open_store", lambda uri: store)
    return store


def test_each_uri_gets_its_store_once_chosen():
    assert isinstance(open_store("/tmp/some-index"), LocalStore)
    assert isinstance(open_store("file:///tmp/some-index"), LocalStore)
    assert isinstance(open_store("s3://bucket/index"), ObjectStore)
    assert open_store("/tmp/some-index").folder == Path("/tmp/some-index")
    assert open_store("s3://bucket/index").folder is None


def test_a_manifest_read_cut_short_by_a_replacement_is_read_again(held: HeldObjects):
    whole = json.dumps({"format": FORMAT, "counts": {}}).encode()
    held.bodies[MANIFEST_FILE] = [whole[: len(whole) // 2], whole]
    assert read_manifest(held.uri) == {"format": FORMAT, "counts": {}}
    assert held.reads == 2


def test_a_manifest_that_stays_cut_is_called_corrupt_in_one_line(held: HeldObjects):
    held.bodies[MANIFEST_FILE] = [b'{"format": "arag-in']
    with pytest.raises(IndexStoreError) as raised:
        read_manifest(held.uri)
    assert held.reads == OBJECT_READS
    assert (
        str(raised.value) == f"{held.uri}/{MANIFEST_FILE} is corrupt; rebuild it with `arag-index build ... --rebuild`"
    )


def test_a_manifest_is_written_through_the_store_and_read_back(sample_index: Path, monkeypatch: pytest.MonkeyPatch):
    stored = read_manifest(str(sample_index))
    manifest = Manifest.from_dict("s3://bucket/index", stored)
    held = HeldObjects(manifest.uri)
    monkeypatch.setattr(manifest_module, "open_store", lambda uri: held)
    write_manifest(manifest)
    assert check_manifest(held.uri) == manifest
    assert read_manifest(held.uri) == stored  # every stored key is a field, written back as it was read


def test_a_local_manifest_is_read_once_and_a_folder_is_locked_against_a_second_builder(tmp_path: Path):
    store = LocalStore(str(tmp_path / "idx"))
    assert store.missing() is not None and "the folder does not exist" in store.missing()
    with store.lock():
        assert store.missing() is None
        with pytest.raises(IndexBusy, match="another arag-index command is changing"), store.lock(wait=False):
            pass
    with store.lock(wait=False):
        pass
    store.write_file(MANIFEST_FILE, b"{}")
    assert store.read_file(MANIFEST_FILE) == b"{}"
    assert store.read_file("absent.json") is None
    assert store.manifest_reads == 1
