"""Bounds on what one tool call may ask for, named in the tools' schemas and errors."""

MAX_TOP_K = 20
MAX_KEYWORDS = 20
MAX_KEYWORD_WORDS = 8
MAX_QUERY_CHARS = 2000
MAX_CHUNK_IDS = 20
MODEL_WAIT_SECONDS = 45.0
MAX_QUERIES = 5
MAX_RESULTS_PER_QUERY = 10
