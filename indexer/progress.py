"""A build's progress on the terminal: the bytes of the files to read, credited as their sentences
are embedded (so the bar and its ETA follow the slow part), with the documents read and the
sentences embedded beside it. It moves within a second of the first file read."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm


class BuildProgress:
    def __init__(self, total_bytes: int, enabled: bool) -> None:
        self.bar = tqdm(
            total=total_bytes,
            desc="indexing",
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            disable=not enabled,
            dynamic_ncols=True,
            smoothing=0.1,
            mininterval=0.5,
        )
        self.documents = 0
        self.sentences = 0
        self._pending_bytes = 0
        """Bytes of files read whose sentences are not all embedded yet."""
        self._logging: AbstractContextManager = logging_redirect_tqdm() if enabled else nullcontext()
        """Log lines (a file skipped, as it is met) printed above the bar until `close`, not through it."""
        self._logging.__enter__()

    def document_read(self) -> None:
        self.documents += 1
        self._show()

    def file_read(self, size: int) -> None:
        self._pending_bytes += size

    def embedded(self, sentences: int, waiting: int) -> None:
        """`sentences` more were embedded; `waiting` of those queued are not yet: the files read are
        credited in proportion."""
        self.sentences += sentences
        share = sentences / (sentences + waiting) if sentences + waiting else 1.0
        credit = round(self._pending_bytes * share)
        self._pending_bytes -= credit
        self.bar.update(credit)
        self._show()

    def _show(self) -> None:
        self.bar.set_postfix_str(
            f"{self.documents:,} documents read, {self.sentences:,} sentences embedded", refresh=False
        )
        self.bar.update(0)

    def close(self) -> None:
        self.bar.update(self._pending_bytes)
        self._pending_bytes = 0
        self.bar.close()
        self._logging.__exit__(None, None, None)
