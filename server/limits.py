"""Bounds on what one tool call may ask for, named in the tools' schemas and errors."""

MAX_TOP_K = 20
MAX_KEYWORDS = 20
MAX_KEYWORD_WORDS = 8
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
MAX_FIND_PATTERN_CHARS = 200
