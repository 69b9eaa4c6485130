"""What a command that changes an index did, told as it goes and at its end."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from arag_mcp.indexer.command_options import terminal_text
from arag_mcp.indexer.index.manifest import Manifest
from arag_mcp.indexer.sources.document import LEFT_OUT, SkippedFile

log = logging.getLogger("arag_mcp.indexer.build")


@dataclass
class BuildSummary:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    documents: int = 0
    chunks: int = 0
    sentences: int = 0
    embedded_sentences: int = 0
    seconds: float = 0.0
    embedding_seconds: float = 0.0
    """Of `seconds`, the time the model took to embed (not its loading, nor reading the files)."""
    skipped: list[SkippedFile] = field(default_factory=list)
    skipped_before: list[SkippedFile] = field(default_factory=list)
    """What unchanged files skipped when they were read (and reported)."""
    skips_shown: int = 0
    """How many of `skipped` have been told (`show_skips`)."""
    manifest: Manifest | None = None
    """The manifest the command left."""

    def count(self, manifest: Manifest, started: float) -> None:
        """What the index holds once the command ends (`manifest`), and the command's time."""
        self.manifest, counts = manifest, manifest.counts
        self.documents, self.chunks, self.sentences = counts.documents, counts.chunks, counts.sentences
        self.unchanged = self.documents - self.added - self.updated
        self.seconds = round(time.perf_counter() - started, 3)

    @property
    def failures(self) -> list[SkippedFile]:
        """What --strict fails on: every skip and notice but the paths a folder's own rules leave out."""
        return [item for item in [*self.skipped, *self.skipped_before] if not item.left_out]

    def show_skips(self, left_out: bool = True) -> None:
        """One line for each file or record skipped since the last call: a long build tells them as
        they happen, not at its end. `left_out`: tell the paths a folder's own rules leave out too
        (a watcher told them at its first sync, and its sweeps list them again: at DEBUG level)."""
        for item in self.skipped[self.skips_shown :]:
            said = "skipped " if item.counted else ""
            level = logging.DEBUG if item.left_out and not left_out else logging.WARNING
            log.log(level, "%s%s", said, terminal_text(str(item), keep=""))
        self.skips_shown = len(self.skipped)

    @property
    def sentences_per_second(self) -> float:
        """The model's rate while it embedded (a Ray build's: over the whole command)."""
        seconds = self.embedding_seconds or self.seconds
        return self.embedded_sentences / seconds if seconds else 0.0

    def describe(self) -> str:
        """What the command did, in one line."""
        rate = f" ({self.sentences_per_second:.0f} sentences/s while embedding)" if self.embedded_sentences else ""
        return (
            f"added {self.added}, updated {self.updated}, removed {self.removed}, unchanged {self.unchanged}; "
            f"the index holds {self.documents} documents, {self.chunks} chunks, {self.sentences} sentences; "
            f"embedded {self.embedded_sentences} sentences in {self.seconds:.1f} s{rate}"
        )


class BuildFailed(Exception):
    """The command could not do what it was asked; the one-line message says why."""


def by_reason(items: Sequence[SkippedFile]) -> str:
    """ "29 unsupported type .png, 5 binary, 2 unreadable": how many of each kind, most first."""
    counts = Counter(item.kind.removeprefix(LEFT_OUT) for item in items)
    return ", ".join(f"{count} {kind}" for kind, count in counts.most_common())


def report_skips(summary: BuildSummary) -> None:
    """The skips not yet told, one line each, then their number; those skipped before by files that
    have not changed since, in one line (listed at DEBUG level)."""
    summary.show_skips()
    skipped = [item for item in summary.skipped if item.counted]
    skipped_before = [item for item in summary.skipped_before if item.counted]
    if skipped:
        log.warning("skipped %d file(s) or record(s), listed above: %s", len(skipped), by_reason(skipped))
    left_out = [item for item in summary.skipped if item.left_out]
    if left_out:
        log.warning("left out %d path(s), listed above: %s", len(left_out), by_reason(left_out))
    for item in skipped_before:
        log.debug("still skipped %s", item)
    if skipped_before:
        files = len({item.file for item in skipped_before})
        log.warning(
            "%d file(s) or record(s) in %d unchanged file(s) are still skipped, as reported when they were read "
            "(--log-level DEBUG lists them)",
            len(skipped_before),
            files,
        )


def fail_strict(summary: BuildSummary) -> None:
    report_skips(summary)
    count = len(summary.failures)
    raise BuildFailed(f"{count} skipped with --strict (listed above); nothing was written")
