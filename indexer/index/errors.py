"""What goes wrong with an index's location, each error's message naming the fix."""

from __future__ import annotations


class IndexStoreError(Exception):
    """The index location cannot be used; the message names the fix."""


class StoreUnanswered(IndexStoreError):
    """The object store did not answer in time: the index may well be whole."""


class IndexBusy(IndexStoreError):
    """Another command is changing the index."""
