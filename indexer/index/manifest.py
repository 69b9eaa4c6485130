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
class RecordedSource:
    """A source the index records: a folder or file read whole, with how it is read (the options
    `arag-index add` was given for it)."""

    path: str
    exclude: tuple[str, ...] = ()
    """gitignore-style patterns left out of it."""
    follow_links: bool = False
    gitignore: bool = True
    """Whether its `.gitignore` files leave paths out."""
    include: tuple[str, ...] = ()
    """gitignore-style patterns of files of other types read as plain text."""

    def to_dict(self) -> dict[str, Any]:
        """As stored: the options only where they are not the default."""
        return {
            "path": self.path,
            "exclude": list(self.exclude),
            **({"follow_links": True} if self.follow_links else {}),
            **({} if self.gitignore else {"gitignore": False}),
            **({"include": list(self.include)} if self.include else {}),
        }

    @classmethod
    def from_dict(cls, data: Any) -> RecordedSource:
        """ValueError where the record is malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            raise ValueError("sources")
        exclude, include = data.get("exclude", []), data.get("include", [])
        if not all(
            isinstance(patterns, list) and all(isinstance(p, str) for p in patterns) for patterns in (exclude, include)
        ):
            raise ValueError("sources")
        return cls(
            data["path"],
            tuple(exclude),
            bool(data.get("follow_links", False)),
            bool(data.get("gitignore", True)),
            tuple(include),
        )


@dataclass(frozen=True)
class Composition:
    """Documents by file type and by folder (collection.py makes the summary from them)."""

    file_types: dict[str, int] = field(default_factory=dict)
    folders: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Manifest:
    """A build: how it was made, what it holds and which table versions and keyword segments make it
    up. Every key the manifest file stores is a field here; `from_dict` checks each and `to_dict`
    writes each, so the rest of the code never looks a key up by name."""

    uri: str
    """Where the index is (not stored)."""
    model: str
    embedding_backend: str
    dimension: int
    query_prompt: str
    document_prompt: str
    chunk_tokens: int
    sentence_tokens: int
    """The most tokens one sentence embeds (longer ones are cut)."""
    splitter: str
    """The sentence splitter's version (sentences.py)."""
    sentence_context: str
    """What each sentence is embedded with (context.py)."""
    encoder: EncoderFiles | None
    """The ONNX query encoder the index carries, or None where it was embedded with torch."""
    sources: tuple[RecordedSource, ...]
    described_as: str
    """The description given to `arag-index describe` ("" where none was: `description` is then
    the summary)."""
    readers: int | None
    """The readers' version every file of the index was read with (formats.py), None where the files
    were read by several."""
    counts: Counts
    composition: Composition
    summary: str
    """What the build derived the collection to be (collection.py)."""
    tables: dict[str, int]
    """Table name → the LanceDB version this build committed (every table it has)."""
    segments: tuple[SegmentEntry, ...]
    """The keyword segments of its chunks, in chunk-number order (segment_set.py)."""
    vector_index: dict[str, Any] | None
    """The IVF-PQ index's parameters and search settings, or None where search is exact."""
    built_at: str
    build_seconds: float

    @classmethod
    def record(
        cls,
        uri: str,
        *,
        embedding: dict[str, Any],
        encoder: EncoderFiles | None = None,
        sources: tuple[RecordedSource, ...] = (),
        described_as: str = "",
        readers: int | None = None,
    ) -> Manifest:
        """What a build records beside its tables, before a commit adds the tally, the table
        versions, the keyword segments and its time. `embedding`: model, embedding_backend, dimension,
        query_prompt, document_prompt, chunk_tokens, sentence_tokens, splitter and sentence_context."""
        return cls(
            uri=uri,
            **embedding,
            encoder=encoder,
            sources=sources,
            described_as=described_as,
            readers=readers,
            counts=Counts(0, 0, 0),
            composition=Composition(),
            summary="",
            tables={},
            segments=(),
            vector_index=None,
            built_at="",
            build_seconds=0.0,
        )

    @property
    def description(self) -> str:
        """What the collection is: the description given to arag-index, else the summary the last
        build derived, by the rule for what hosts read (collection.py), whoever wrote the manifest."""
        return metadata_line(self.described_as or self.summary)

    @property
    def vector_settings(self) -> tuple[Any, ...]:
        """What, with a document's content, determines its sentences' vectors: a build with the same
        settings embeds a sentence as the last one did."""
        return (
            self.model,
            self.embedding_backend,
            self.dimension,
            self.document_prompt,
            self.chunk_tokens,
            self.sentence_tokens,
            self.splitter,
            self.sentence_context,
        )

    def to_dict(self) -> dict[str, Any]:
        """The manifest as stored."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "model": self.model,
            "embedding_backend": self.embedding_backend,
            "dimension": self.dimension,
            "query_prompt": self.query_prompt,
            "document_prompt": self.document_prompt,
            "chunk_tokens": self.chunk_tokens,
            "sentence_tokens": self.sentence_tokens,
            "splitter": self.splitter,
            "sentence_context": self.sentence_context,
            "encoder": self.encoder.to_dict() if self.encoder else None,
            "sources": [source.to_dict() for source in self.sources],
            "description": self.described_as,
            "readers": self.readers,
            "counts": {
                "documents": self.counts.documents,
                "chunks": self.counts.chunks,
                "sentences": self.counts.sentences,
            },
            "composition": {"file_types": dict(self.composition.file_types), "folders": dict(self.composition.folders)},
            "summary": self.summary,
            "tables": dict(self.tables),
            "segments": [entry.to_dict() for entry in self.segments],
            "vector_index": self.vector_index,
            "built_at": self.built_at,
            "build_seconds": self.build_seconds,
        }

    @classmethod
    def from_dict(cls, uri: str, data: dict[str, Any]) -> Manifest:
        """The manifest of `uri`; IndexStoreError names the first missing or mistyped field."""

        def need(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
            if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
                raise IndexStoreError(
                    f"{joined(uri, MANIFEST_FILE)} is damaged ({name!r} is missing or invalid); {REBUILD_HINT}"
                )
            return value

        def records(name: str, read: Any) -> Any:
            try:
                return read(data.get(name))
            except ValueError:
                return need(None, dict, name)

        counts = need(data.get("counts"), dict, "counts")
        composition = need(data.get("composition"), dict, "composition")
        stored_tables = need(data.get("tables"), dict, "tables")
        return cls(
            uri=uri,
            model=need(data.get("model"), str, "model"),
            embedding_backend=need(data.get("embedding_backend"), str, "embedding_backend"),
            dimension=need(data.get("dimension"), int, "dimension"),
            query_prompt=need(data.get("query_prompt"), str, "query_prompt"),
            document_prompt=need(data.get("document_prompt"), str, "document_prompt"),
            chunk_tokens=need(data.get("chunk_tokens"), int, "chunk_tokens"),
            sentence_tokens=need(data.get("sentence_tokens"), int, "sentence_tokens"),
            splitter=need(data.get("splitter"), str, "splitter"),
            sentence_context=need(data.get("sentence_context"), str, "sentence_context"),
            encoder=records("encoder", EncoderFiles.from_dict),
            sources=records(
                "sources", lambda listed: tuple(RecordedSource.from_dict(item) for item in _listed(listed))
            ),
            described_as=need(data.get("description", ""), str, "description"),
            readers=need(data.get("readers"), (int, type(None)), "readers"),
            counts=Counts(
                *(need(counts.get(name), int, f"counts.{name}") for name in ("documents", "chunks", "sentences"))
            ),
            composition=Composition(
                dict(need(composition.get("file_types"), dict, "composition.file_types")),
                dict(need(composition.get("folders"), dict, "composition.folders")),
            ),
            summary=need(data.get("summary"), str, "summary"),
            tables={name: need(stored_tables.get(name), int, f"tables.{name}") for name in TABLES},
            segments=records(
                "segments", lambda listed: tuple(SegmentEntry.from_dict(item) for item in _listed(listed))
            ),
            vector_index=need(data.get("vector_index"), (dict, type(None)), "vector_index"),
            built_at=need(data.get("built_at"), str, "built_at"),
            build_seconds=float(need(data.get("build_seconds", 0.0), (int, float), "build_seconds")),
        )


def _listed(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("not a list")
    return value


def read_manifest(uri: str) -> dict[str, Any] | None:
    """The committed manifest at `uri` as stored, or None where no build has completed there."""
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


def committed_manifest(uri: str, other_format: bool = False) -> Manifest | None:
    """The committed build at `uri`, or None where no build has completed there; IndexStoreError
    where it has another format than this arag-mcp reads, or with `other_format` (a rebuild, which
    replaces it) None."""
    stored = read_manifest(uri)
    if stored is None:
        return None
    if stored.get("format_version") != FORMAT_VERSION:
        if other_format:
            return None
        check_format(uri, stored)
    return Manifest.from_dict(uri, stored)


def write_manifest(manifest: Manifest) -> None:
    """Replace the manifest atomically (rename locally; a single PUT on object stores)."""
    stored = json.dumps(manifest.to_dict(), indent=2, sort_keys=True).encode("utf-8")
    open_store(manifest.uri).write_file(MANIFEST_FILE, stored)


def describe_missing(uri: str) -> str:
    """One line saying why `uri` holds no index and what to do."""
    return open_store(uri).missing() or (
        f"{uri} is not an arag-mcp index (no {MANIFEST_FILE} from a completed build); "
        f"build one with `arag-index build SOURCE --index {uri}` or fix --index"
    )


def check_manifest(uri: str) -> Manifest:
    """The committed manifest at `uri` (normalised); IndexStoreError names the fix when there is none."""
    manifest = committed_manifest(uri)
    if manifest is None:
        raise IndexStoreError(describe_missing(uri))
    return manifest


def check_format(uri: str, manifest: dict[str, Any]) -> None:
    """IndexStoreError naming the fix where the index at `uri` has another format than this arag-mcp reads."""
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IndexStoreError(
            f"{uri} has index format {manifest.get('format_version')}, this arag-mcp reads {FORMAT_VERSION}; {REBUILD_HINT}"
        )
