"""Document keys and chunk ids: short, stable, and a chunk's neighbours follow from its id."""

from __future__ import annotations

import base64
import hashlib

DOC_KEY_CHARS = 10
"""A chunk id starts with its document's key, this long."""


def doc_key(doc_id: str) -> str:
    """A short stable key for a document id: 10 base32 characters (50 bits) of its SHA-1."""
    digest = hashlib.sha1(doc_id.encode("utf-8")).digest()
    return base64.b32encode(digest).decode("ascii")[:DOC_KEY_CHARS].lower()


def chunk_id(key: str, part: int) -> str:
    """Chunk ids are ``<doc key>-<part>``; neighbours differ by one in the part."""
    return f"{key}-{part}"


MAX_PART_DIGITS = 9
"""Parts are stored as int32; a longer digit run cannot name a chunk (and int() of thousands of
digits raises)."""


def parse_chunk_id(value: str) -> tuple[str, int] | None:
    """(doc key, part) of a well-formed chunk id, else None."""
    key, sep, part = value.strip().rpartition("-")
    if not sep or len(key) != DOC_KEY_CHARS or not (part.isascii() and part.isdigit()):
        return None
    if len(part) > MAX_PART_DIGITS:
        return None
    return key, int(part)
