"""Keeping a table's fragments and indexes in shape at a cost that follows the commits, not the table.

Each write appends a fragment to a table. Once COMPACT_FRAGMENTS fragments are small (under the
table's target size, FRAGMENT_BYTES in rows of its mean size) they are merged into fragments of
that size; a fragment of that size is not rewritten again until a tenth of its rows are deleted
(Lance's threshold). The new rows join each index as a delta of its own, and once an index has
INDEX_DELTAS deltas they are merged into one: its first part, made when the index was, is not
rewritten. So a compaction copies the last commits' rows and the deltas, wherever the table stands.

LanceDB's `optimize` does neither: it merges every fragment under a million rows and merges the new
rows into each index whole, so it rewrote a 100k-chunk index every few commits. Lance's own Python
API (pylance) takes the target size and the merge count.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

COMPACT_FRAGMENTS = 16
"""Fragments under the target size at which a table is compacted (each write appends one)."""
FRAGMENT_BYTES = 32 * 2**20
"""The size compaction makes fragments up to."""
MIN_FRAGMENT_ROWS = 1024
"""The fewest rows compaction aims at per fragment, however large the rows."""
INDEX_DELTAS = 8
"""Deltas an index may hold beside its first part before they are merged into one."""


def target_rows(table: Any) -> int:
    """Rows per fragment that make about FRAGMENT_BYTES in this table (a LanceDB table)."""
    stats = table.stats()
    row_bytes = stats["total_bytes"] / max(1, stats["num_rows"])
    return max(MIN_FRAGMENT_ROWS, int(FRAGMENT_BYTES / max(1.0, row_bytes)))


def compaction_due(table: Any) -> bool:
    """Whether COMPACT_FRAGMENTS of the table's fragments are under its target size."""
    target = target_rows(table)
    return sum(fragment.physical_rows < target for fragment in table.to_lance().get_fragments()) >= COMPACT_FRAGMENTS


def compact(table: Any, cleanup_age: Callable[[], timedelta]) -> None:
    """Merge the small fragments, add the new rows to each index (a delta, or the deltas merged with
    them), then remove the versions older than `cleanup_age()` (a timedelta, measured after the
    compaction: one longer than the age's margin would otherwise let the cleanup remove the version
    the committed manifest names)."""
    dataset = table.to_lance()
    dataset.optimize.compact_files(target_rows_per_fragment=target_rows(table))
    for index in dataset.describe_indices():
        deltas = len(index.segments) - 1
        merged = deltas if deltas >= INDEX_DELTAS else 0
        dataset.optimize.optimize_indices(index_names=[index.name], num_indices_to_merge=merged)
    dataset.cleanup_old_versions(older_than=cleanup_age())
    table.checkout_latest()
