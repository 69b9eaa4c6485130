"""Whole documents: every document in an index has each of its chunks once and its documents row.

A build checks the rows it wrote before each commit (`WrittenRows`) and refuses to commit a
document it wrote only in part. An index damaged by an earlier build is found from its tables
(`incomplete_documents`), and the next build or sync embeds those documents again.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from .errors import IndexStoreError
from .schema import ChunkColumn, DocumentColumn

SHOWN = 5
"""How many incomplete documents a message names."""


class IncompleteWrite(IndexStoreError):
    """A build wrote a document in part; nothing of it is committed."""


def incomplete_documents(chunk_rows: pa.Table, document_rows: pa.Table) -> dict[str, str]:
    """doc_id → what is wrong, for every document whose chunks are not each of 0..parts-1 once, or
    whose documents row is missing or counts other chunks. `chunk_rows` holds the chunk id, doc id,
    part and parts columns; `document_rows` the doc id and chunks columns."""
    grouped = chunk_rows.group_by(ChunkColumn.DOC_ID).aggregate(
        [
            (ChunkColumn.ID, "count"),
            (ChunkColumn.ID, "count_distinct"),
            (ChunkColumn.PART, "min"),
            (ChunkColumn.PART, "max"),
            (ChunkColumn.PARTS, "max"),
        ]
    )
    documents = dict(
        zip(document_rows[DocumentColumn.ID].to_pylist(), document_rows[DocumentColumn.CHUNKS].to_pylist())
    )
    problems: dict[str, str] = {}
    columns = (
        f"{ChunkColumn.ID}_count",
        f"{ChunkColumn.ID}_count_distinct",
        f"{ChunkColumn.PART}_min",
        f"{ChunkColumn.PART}_max",
        f"{ChunkColumn.PARTS}_max",
    )
    for doc_id, rows, distinct, first, last, parts in zip(
        *(grouped[n].to_pylist() for n in (ChunkColumn.DOC_ID, *columns))
    ):
        if rows != distinct:
            problems[doc_id] = f"{rows - distinct} duplicate chunk(s)"
        elif distinct != parts or first != 0 or last != parts - 1:
            problems[doc_id] = f"{distinct} of its {parts} chunks"
        elif doc_id not in documents:
            problems[doc_id] = "no documents row"
        elif documents[doc_id] != parts:
            problems[doc_id] = f"a documents row that counts {documents[doc_id]} chunks, not {parts}"
    chunked = set(pc.unique(chunk_rows[ChunkColumn.DOC_ID]).to_pylist())
    for doc_id in documents.keys() - chunked:
        problems[doc_id] = "a documents row but no chunks"
    return problems


def describe_problems(problems: dict[str, str]) -> str:
    """The first few incomplete documents and what each lacks, for one line."""
    shown = "; ".join(f"{doc_id}: {problem}" for doc_id, problem in sorted(problems.items())[:SHOWN])
    more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return shown + more


class WrittenRows:
    """The chunk and documents rows a build wrote since its last commit, checked before the next.

    Commits fall between documents, so each document written since the last commit must be whole
    among these rows alone; except the one document a commit names as in progress (a long document,
    committed in parts), whose rows are kept to be checked whole at a later commit."""

    def __init__(self) -> None:
        self._chunks: list[pa.Table] = []
        self._documents: list[pa.Table] = []

    def record(self, chunk_rows: pa.Table, document_rows: pa.Table) -> None:
        self._chunks.append(
            chunk_rows.select([ChunkColumn.ID, ChunkColumn.DOC_ID, ChunkColumn.PART, ChunkColumn.PARTS])
        )
        self._documents.append(document_rows.select([DocumentColumn.ID, DocumentColumn.CHUNKS]))

    def check(self, in_progress: str | None = None) -> None:
        """Raise IncompleteWrite naming the documents written in part, but `in_progress`; else
        forget the rows committed (keeping those of `in_progress`)."""
        if not self._chunks:
            return
        chunks, documents = pa.concat_tables(self._chunks), pa.concat_tables(self._documents)
        problems = incomplete_documents(chunks, documents)
        problems.pop(in_progress, None)
        if problems:
            raise IncompleteWrite(
                f"refusing to commit {len(problems)} document(s) written in part ({describe_problems(problems)}); "
                "the index keeps its last commit: please report this with the command that led to it"
            )
        self._chunks = [] if in_progress is None else [chunks.filter(pc.equal(chunks[ChunkColumn.DOC_ID], in_progress))]
        self._documents = (
            [] if in_progress is None else [documents.filter(pc.equal(documents[DocumentColumn.ID], in_progress))]
        )
