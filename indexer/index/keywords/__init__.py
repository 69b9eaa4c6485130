"""The keyword engine: what keyword_search matches, how its index is written and read, and how it ranks.

Everything outside this package uses the names below and none of its modules (an import contract
in pyproject.toml), so the segment files, their vocabularies and the counting behind a score can
change without the server or the build noticing:

- **write**: `KeywordSegments`, a writer's side. Each commit writes one immutable segment of the
  chunks it added (postings with word positions, texts and the catalogue's held columns, as Arrow
  files), and masks the chunks it removed; `chunk_terms` gives a chunk's terms as written.
- **open**: `open_segments(manifest, previous)`, the segments a committed manifest names, numbered
  densely (taking over those a previous build opened); `KeywordLookup` over them, the words
  a search looks up.
- **search**: `keyword_search`, exact counts and scores (BM25 over whole words by default, the
  paper's Σ count · len(keyword) over substrings); word forms and identifiers that name a
  keyword's words (`with_other_forms`, `stand_ins`).
- **merge**: `KeywordSegments.merge_due`, size-tiered and each merge committed by a manifest of its
  own, off a commit's critical path.
- **words**: how matching sees words (`fold`, `words_of`, ...), which snippets and scopes share.

`definition.py` is the ranking definition computed the slow, obvious way; the tests in
tests/keywords/ check the engine against it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .identifiers import stand_ins, stand_ins_note, with_stand_ins
    from .lookup import KeywordLookup
    from .search import ChunkCount, KeywordFindings, SearchedIndex, keyword_search, wordless
    from .segment_set import SegmentGone, SegmentSet, open_segments
    from .segment_writer import KeywordSegments, segments_damage
    from .segments import SEGMENT_COLUMNS, SegmentChanged
    from .terms import chunk_terms, chunk_words, lower
    from .word_forms import forms_note, with_other_forms
    from .words import (
        KEYWORD_MATCHES,
        KeywordMatch,
        MarkedKeyword,
        compared_form,
        fold,
        with_and,
        word_matches,
        words_of,
    )

_HOMES = {
    "stand_ins": "identifiers",
    "stand_ins_note": "identifiers",
    "with_stand_ins": "identifiers",
    "KeywordLookup": "lookup",
    "ChunkCount": "search",
    "KeywordFindings": "search",
    "SearchedIndex": "search",
    "keyword_search": "search",
    "wordless": "search",
    "SegmentGone": "segment_set",
    "SegmentSet": "segment_set",
    "open_segments": "segment_set",
    "KeywordSegments": "segment_writer",
    "segments_damage": "segment_writer",
    "SEGMENT_COLUMNS": "segments",
    "SegmentChanged": "segments",
    "chunk_terms": "terms",
    "chunk_words": "terms",
    "lower": "terms",
    "forms_note": "word_forms",
    "with_other_forms": "word_forms",
    "KEYWORD_MATCHES": "words",
    "KeywordMatch": "words",
    "MarkedKeyword": "words",
    "compared_form": "words",
    "fold": "words",
    "with_and": "words",
    "word_matches": "words",
    "words_of": "words",
}
"""Each name's module: imported when the name is first asked for, so that a process that needs
only how words match (the server's start-up) loads no Arrow or NumPy."""

__all__ = [
    "ChunkCount",
    "KEYWORD_MATCHES",
    "KeywordFindings",
    "KeywordLookup",
    "KeywordMatch",
    "KeywordSegments",
    "MarkedKeyword",
    "SEGMENT_COLUMNS",
    "SearchedIndex",
    "SegmentChanged",
    "SegmentGone",
    "SegmentSet",
    "chunk_terms",
    "chunk_words",
    "compared_form",
    "fold",
    "forms_note",
    "keyword_search",
    "lower",
    "open_segments",
    "segments_damage",
    "stand_ins",
    "stand_ins_note",
    "with_and",
    "with_other_forms",
    "with_stand_ins",
    "word_matches",
    "wordless",
    "words_of",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
