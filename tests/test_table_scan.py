"""Whole-table reads (`reading.scan`) return every row of the query, whatever the batch size."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pyarrow as pa
from arag_mcp.indexer.index.reading import scan
from arag_mcp.indexer.index.schema import CHUNKS, SENTENCES, ChunkColumn, SentenceColumn


def test_a_scan_in_small_batches_reads_every_row_of_the_query(hashed_sample_index: Path):
    db = lancedb.connect(str(hashed_sample_index))
    sentences = db.open_table(SENTENCES)
    query = sentences.search().select([SentenceColumn.CHUNK_ID, SentenceColumn.POSITION]).with_row_id(True)
    batches = list(scan(query, batch_rows=5))
    assert len(batches) > 1 and max(batch.num_rows for batch in batches) <= 5
    scanned = pa.Table.from_batches(batches).sort_by("_rowid")
    assert scanned.num_rows == sentences.count_rows()
    assert scanned == query.limit(None).to_arrow().sort_by("_rowid")

    chunks = db.open_table(CHUNKS)
    first_parts = scan(
        chunks.search().where(f"{ChunkColumn.PART} = 0").select([ChunkColumn.ID]), batch_rows=2
    ).read_all()
    assert sorted(first_parts[ChunkColumn.ID].to_pylist()) == sorted(
        row[ChunkColumn.ID]
        for row in chunks.search().select([ChunkColumn.ID, ChunkColumn.PART]).limit(None).to_arrow().to_pylist()
        if row[ChunkColumn.PART] == 0
    )
