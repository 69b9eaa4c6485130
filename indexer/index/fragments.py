"""Lance's distributed write: workers write fragments of a table, the builder appends them in one commit.

A written fragment is data files and nothing else: no table version names it until `append`
commits it, so fragments of a killed worker or an abandoned build are never read. pylance (Lance's
own Python API, beside LanceDB) is imported when first used; like LanceDB, it takes object-store
credentials from the environment.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa


def write(table_uri: str, rows: pa.Table) -> list[str]:
    """Write `rows` as new fragments of the table at `table_uri`, in its file format; returns them as JSON."""
    import lance
    from lance.fragment import write_fragments

    dataset = lance.dataset(table_uri)
    fragments = write_fragments(
        rows,
        table_uri,
        schema=dataset.schema,
        data_storage_version=dataset.data_storage_version,
    )
    return [json.dumps(fragment.to_json()) for fragment in fragments]


def append(table_uri: str, fragments: list[str], read_version: int) -> Any:
    """Commit `fragments` (from `write`) as one new version of the table, on top of `read_version`."""
    import lance
    from lance.fragment import FragmentMetadata

    operation = lance.LanceOperation.Append([FragmentMetadata.from_json(fragment) for fragment in fragments])
    return lance.LanceDataset.commit(table_uri, operation, read_version=read_version)


def appended_rows(dataset: Any, count: int, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
    """These columns of the rows of `dataset`'s last `count` fragments: those `append` committed,
    read by one scan of them alone, however large the table."""
    return dataset.scanner(columns=list(columns), fragments=dataset.get_fragments()[-count:]).to_batches()
