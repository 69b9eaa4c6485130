"""The index manifest: what a build holds and which table versions make it up.

Kept free of LanceDB so that the server can validate an index and answer the MCP handshake
before the storage engine is even imported.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

from .collection import metadata_line
from .errors import IndexStoreError
from .object_store import joined
from .schema import TABLES
from .stores import open_store

FORMAT = "arag-index"
FORMAT_VERSION = 7
MANIFEST_FILE = "manifest.json"
ENCODER_DIR = "encoder"
"""Where an index keeps the query encoder it was embedded with (encoder_files.py)."""


REBUILD_HINT = "rebuild it with `arag-index build ... --rebuild`"


@dataclass(frozen=True)
class Counts:
    documents: int
    chunks: int
    sentences: int


@dataclass(frozen=True)
class EncoderFiles:
    """Where an index's query encoder is (relative to the index) and what each of its files must hash to."""

    folder: str
    checksums: dict[str, str]
    """File name → SHA-256 hex digest."""
    sizes: dict[str, int]
    """File name → bytes: a cheap check at open, before the checksums are read."""

    def to_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "checksums": self.checksums, "sizes": self.sizes}

    @classmethod
    def from_dict(cls, data: Any) -> EncoderFiles | None:
        """The recorded encoder, or None; ValueError where the record is malformed."""
        if data is None:
            return None
        if not isinstance(data, dict) or not re.fullmatch(rf"{ENCODER_DIR}/[0-9a-f]{{16}}", str(data.get("folder"))):
            raise ValueError("encoder")
        checksums, sizes = data.get("checksums"), data.get("sizes")
        if not isinstance(checksums, dict) or not isinstance(sizes, dict) or checksums.keys() != sizes.keys():
            raise ValueError("encoder")
        if not all(re.fullmatch(r"[\w.-]+", name) and name.strip(".") for name in checksums):
            raise ValueError("encoder")  # plain file names inside the folder, nothing that leads out of it
        if not all(isinstance(v, str) for v in checksums.values()) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in sizes.values()
        ):
            raise ValueError("encoder")
        return cls(data["folder"], dict(checksums), dict(sizes))

    @property
    def digest(self) -> str:
        return self.folder.rsplit("/", 1)[-1]

    def __hash__(self) -> int:  # the folder is named by the files' checksums
        return hash(self.folder)


@dataclass(frozen=True)
class SegmentEntry:
    """One keyword segment a build is made of (segments.py)."""

    name: str
    chunks: int
    """Chunks written in it."""
    dead: str | None = None
    """The file of its chunks removed since, or None."""
    dead_count: int = 0
    sizes: dict[str, int] | None = field(default=None, hash=False)
    """File name → bytes as written, checked before a reader opens the file (None: a segment
    written before sizes were recorded)."""
    checksums: dict[str, str] | None = field(default=None, hash=False)
    """File name → CRC-32 of its bytes as written (segments.file_checksum), checked where a file
    is read whole and, for the large ones, once per reader in the background (None: not recorded)."""

    @property
    def live(self) -> int:
        return self.chunks - self.dead_count

    def with_dead(self, dead: str, dead_count: int) -> SegmentEntry:
        return replace(self, dead=dead, dead_count=dead_count)

    def to_dict(self) -> dict[str, Any]:
        written = {"sizes": self.sizes} if self.sizes is not None else {}
        if self.checksums is not None:
            written["checksums"] = self.checksums
        return {"name": self.name, "chunks": self.chunks, "dead": self.dead, "dead_count": self.dead_count, **written}

    @classmethod
    def from_dict(cls, data: Any) -> SegmentEntry:
        """ValueError where the record is malformed."""
        if not isinstance(data, dict) or not re.fullmatch(r"[0-9a-f]{16}", str(data.get("name"))):
            raise ValueError("segments")
        chunks, dead, dead_count = data.get("chunks"), data.get("dead"), data.get("dead_count")
        counts_valid = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (chunks, dead_count))
        if (
            not counts_valid
            or dead_count > chunks
            or not (dead is None or re.fullmatch(r"dead-[0-9a-f]{16}\.arrow", str(dead)))
        ):
            raise ValueError("segments")
        sizes = data.get("sizes")
        if sizes is not None and not (
            isinstance(sizes, dict)
            and all(
                isinstance(size, int)
                and not isinstance(size, bool)
                and size >= 0
                and re.fullmatch(r"[a-z_]+\.arrow", name)
                for name, size in sizes.items()
            )
        ):
            raise ValueError("segments")
        checksums = data.get("checksums")
        if checksums is not None and not (
            isinstance(checksums, dict)
            and all(
                isinstance(checksum, str)
                and re.fullmatch(r"[0-9a-f]{8}", checksum)
                and re.fullmatch(r"[a-z_]+\.arrow", name)
                for name, checksum in checksums.items()
            )
        ):
            raise ValueError("segments")
        return cls(
            data["name"],
            chunks,
            dead,
            dead_count,
            None if sizes is None else dict(sizes),
            None if checksums is None else dict(checksums),
        )


@dataclass(frozen=True)
class Manifest:
    """A committed build, as readers need it; `from_dict` checks every field they use."""

    uri: str
    model: str
    embedding_backend: str
    dimension: int
    counts: Counts
    tables: dict[str, int]
    """Table name → the LanceDB version this build committed (every table it has)."""
    vector_index: dict[str, Any] | None
    """The IVF-PQ index's parameters and search settings, or None where search is exact."""
    built_at: str
    summary: str
    """What the build derived the collection to be (collection.py)."""
    encoder: EncoderFiles | None
    """The ONNX query encoder the index carries, or None where it was embedded with torch."""
    segments: tuple[SegmentEntry, ...]
    """The keyword segments of its chunks, in chunk-number order (segment_set.py)."""
    raw: dict[str, Any] = field(repr=False)
    """The manifest as stored, for display (`arag-index info`, the `arag://index` resource)."""

    @property
    def description(self) -> str:
        """What the collection is: the description given to arag-index, else the summary the last
        build derived, by the rule for what hosts read (collection.py), whoever wrote the manifest."""
        return metadata_line(str(self.raw.get("description") or self.summary))

    @classmethod
    def from_dict(cls, uri: str, data: dict[str, Any]) -> Manifest:
        """The manifest of `uri`; IndexStoreError names the first missing or mistyped field."""

        def need(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
            if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
                raise IndexStoreError(
                    f"{joined(uri, MANIFEST_FILE)} is damaged ({name!r} is missing or invalid); {REBUILD_HINT}"
                )
            return value

        counts = need(data.get("counts"), dict, "counts")
        stored_tables = need(data.get("tables"), dict, "tables")
        try:
            encoder = EncoderFiles.from_dict(data.get("encoder"))
        except ValueError:
            need(None, dict, "encoder")
        try:
            segments = tuple(SegmentEntry.from_dict(entry) for entry in need(data.get("segments"), list, "segments"))
        except ValueError:
            need(None, dict, "segments")
        return cls(
            uri=uri,
            model=need(data.get("model"), str, "model"),
            embedding_backend=need(data.get("embedding_backend"), str, "embedding_backend"),
            dimension=need(data.get("dimension"), int, "dimension"),
            counts=Counts(
                *(need(counts.get(name), int, f"counts.{name}") for name in ("documents", "chunks", "sentences"))
            ),
            tables={name: need(stored_tables.get(name), int, f"tables.{name}") for name in TABLES},
            vector_index=need(data.get("vector_index"), (dict, type(None)), "vector_index"),
            built_at=need(data.get("built_at"), str, "built_at"),
            summary=need(data.get("summary"), str, "summary"),
            encoder=encoder,
            segments=segments,
            raw=data,
        )


def read_manifest(uri: str) -> dict[str, Any] | None:
    """The committed manifest at `uri`, or None where no build has completed there."""
    store = open_store(uri)
    for attempt in range(store.manifest_reads):
        raw = store.read_file(MANIFEST_FILE)
        if raw is None:
            return None
        try:
            manifest = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            manifest = None
        if isinstance(manifest, dict):
            break
        time.sleep(0.05 * (attempt + 1))
    if not isinstance(manifest, dict):
        raise IndexStoreError(f"{joined(uri, MANIFEST_FILE)} is corrupt; {REBUILD_HINT}")
    if manifest.get("format") != FORMAT:
        return None
    return manifest


def write_manifest(uri: str, manifest: dict[str, Any]) -> None:
    """Replace the manifest atomically (rename locally; a single PUT on object stores)."""
    open_store(uri).write_file(MANIFEST_FILE, json.dumps(manifest, indent=2, sort_keys=True).encode("utf-8"))


def describe_missing(uri: str) -> str:
    """One line saying why `uri` holds no index and what to do."""
    return open_store(uri).missing() or (
        f"{uri} is not an arag-mcp index (no {MANIFEST_FILE} from a completed build); "
        f"build one with `arag-index build SOURCE --index {uri}` or fix --index"
    )


def check_manifest(uri: str) -> Manifest:
    """The committed manifest at `uri` (normalised); IndexStoreError names the fix when there is none."""
    manifest = read_manifest(uri)
    if manifest is None:
        raise IndexStoreError(describe_missing(uri))
    check_format(uri, manifest)
    return Manifest.from_dict(uri, manifest)


def check_format(uri: str, manifest: dict[str, Any]) -> None:
    """IndexStoreError naming the fix where the index at `uri` has another format than this arag-mcp reads."""
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IndexStoreError(
            f"{uri} has index format {manifest.get('format_version')}, this arag-mcp reads {FORMAT_VERSION}; {REBUILD_HINT}"
        )
