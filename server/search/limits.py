"""Bounds on what one tool call may ask for (named in the tools' schemas and errors), on what a
result shows of a record's metadata, and on what an error echoes of what it refuses."""

import json
from typing import Any

MAX_TOP_K = 20
MAX_OFFSET = 200
"""How deep a search's later pages reach: at most MAX_OFFSET + MAX_TOP_K results in."""
MAX_PASSED_OVER = 100
"""Results the conversation has whole that a vector search reaches past at most, to fill its places."""
EXCLUDE_ROUNDS = 3
"""Searches run again at most this often to fill places held by results the conversation has."""
MAX_KEYWORDS = 20
MAX_KEYWORD_WORDS = 16
"""A full name or title is the best keyword there is: "The Covenant, The Sword, and the Arm of the Lord"."""
MAX_KEYWORD_CHARS = 200
MAX_KEYWORD_PIECES = 16
"""Word pieces (runs of letters and digits) per keyword: a phrase's cost grows with its pieces."""
MAX_QUERY_CHARS = 2000
MAX_CHUNK_IDS = 20
MODEL_WAIT_SECONDS = 45.0
MAX_QUERIES = 5
MAX_RESULTS_PER_QUERY = 10
MAX_SCOPE_CONDITIONS = 20
MAX_SCOPE_CHARS = 500
"""The longest key or value of a scope's condition."""
MAX_PATTERN_WILDCARDS = 12
"""Per source pattern: RE2's matching automaton can double in size with each wildcard."""
MAX_FIND_PATTERNS = 10
"""With within_document.py's PASSAGES_PER_PATTERN passages of 2 * CONTEXT_LINES + 1 lines of at most
LINE_CHARS, one find answers in at most ~20,000 characters of passages (about 5,000 tokens)."""
MAX_FIND_PATTERN_CHARS = 200

METADATA_FIELDS = 10
METADATA_VALUE_CHARS = 200

QUOTED_CHARS = 100


def quoted(value: Any) -> str:
    """`value` as JSON, cut to QUOTED_CHARS characters: enough to recognise, whatever its size."""
    if isinstance(value, str):
        value = value[: QUOTED_CHARS + 1]
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # a number of thousands of digits, nesting thousands deep
        return f"a {type(value).__name__} too large to quote"
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"
