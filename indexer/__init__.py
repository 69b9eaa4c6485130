"""Indexer: corpus files to a hierarchical LanceDB index."""

import os

for _logger in ("LANCE_LOG", "LANCEDB_LOG"):  # LanceDB's Rust loggers print warnings unless told otherwise
    os.environ.setdefault(_logger, "error")
