"""Indexer: corpus files to a hierarchical LanceDB index."""
