"""Unicode normal forms in time linear in the text, whatever its combining marks.

Normalising reorders each run of combining marks by class, and CPython's reordering is quadratic in
the run's length: a few thousand alternating marks take seconds, forty thousand minutes. Unicode's
Stream-Safe Text Format (UAX #15) bounds those runs: after 30 marks in a row it puts an invisible
COMBINING GRAPHEME JOINER, which normalisation never moves marks across, so every run it sorts is
short. No real script writes that many marks on one letter.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

import regex

MAX_MARKS_IN_A_ROW = 30
"""UAX #15's bound on non-starters in a row."""
GRAPHEME_JOINER = "\u034f"
_MARK = r"[\p{M}\uFF9E\uFF9F]"
"""Combining marks, and the half-width kana voicing marks that compatibility forms turn into them
(the only other characters that normalise to a combining mark)."""
_LONG_MARK_RUN = regex.compile(f"{_MARK}{{{MAX_MARKS_IN_A_ROW}}}(?={_MARK})")


def stream_safe(text: str) -> str:
    """`text` with a grapheme joiner after every MAX_MARKS_IN_A_ROW combining marks in a row."""
    return _LONG_MARK_RUN.sub(lambda run: run[0] + GRAPHEME_JOINER, text)


def normalized(form: Literal["NFC", "NFD", "NFKC", "NFKD"], text: str) -> str:
    """`unicodedata.normalize(form, text)` in time linear in `text` (see the module's note)."""
    return unicodedata.normalize(form, stream_safe(text))
