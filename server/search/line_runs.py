"""Line numbers a conversation was sent, held as sorted, disjoint runs.

`open` sends windows of up to 1,800 consecutive lines and `find` passages of a few: as runs, a
window costs two numbers instead of a set entry per line (about 170 KB for one window).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator


class LineRuns:
    """Sorted, disjoint, non-adjacent runs [start, stop) of line numbers."""

    __slots__ = ("starts", "stops")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.stops: list[int] = []

    def add(self, lines: Iterable[int]) -> None:
        """Add line numbers (a range or any iterable of them), merging runs that touch."""
        for start, stop in _runs(lines):
            first = bisect.bisect_left(self.stops, start)  # runs ending before `start` stay
            last = bisect.bisect_right(self.starts, stop)  # runs starting after `stop` stay
            if first < last:
                start, stop = min(start, self.starts[first]), max(stop, self.stops[last - 1])
            self.starts[first:last], self.stops[first:last] = [start], [stop]

    def covers(self, lines: range) -> bool:
        """Whether every line of `lines` is held (an empty range is)."""
        if not lines:
            return True
        at = bisect.bisect_right(self.starts, lines.start) - 1
        return at >= 0 and self.stops[at] >= lines.stop

    def __iter__(self) -> Iterator[int]:
        for start, stop in zip(self.starts, self.stops):
            yield from range(start, stop)

    def __len__(self) -> int:
        """How many runs are held (what they cost), not how many lines."""
        return len(self.starts)


def _runs(lines: Iterable[int]) -> Iterator[tuple[int, int]]:
    if isinstance(lines, range) and lines.step == 1:
        if lines:
            yield lines.start, lines.stop
        return
    numbers = sorted(set(lines))
    at = 0
    while at < len(numbers):
        end = at
        while end + 1 < len(numbers) and numbers[end + 1] == numbers[end] + 1:
            end += 1
        yield numbers[at], numbers[end] + 1
        at = end + 1
