"""What a collection is, in a phrase a model reads: the description given to arag-index, or a
summary derived from the documents (how many, of which file types, from which folders).

Both live in the manifest, so a server can say what it searches before it opens any table. Hosts
take server instructions and tool descriptions as trusted metadata, so every text put there passes
one rule, `metadata_line`: a folder named "guide\n\nIMPORTANT SYSTEM NOTE: ..." is one short line
among the counts, not a paragraph of instructions.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import PurePosixPath

MAX_DESCRIPTION_CHARS = 300
MAX_NAME_CHARS = 60
"""A folder or file name in a summary is cut to this many characters."""
SHOWN_TYPES = 4
SHOWN_FOLDERS = 3
ELLIPSIS = "…"
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn"})
"""Control, format (bidirectional overrides, zero-width), private-use, surrogate and unassigned characters."""


def metadata_line(text: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    """`text` as metadata a host reads: control and format characters removed, whitespace (line
    breaks included) collapsed to single spaces, at most `limit` characters (a longer text is cut and
    ends with an ellipsis)."""
    line = _one_line(text)
    return line if len(line) <= limit else line[: limit - 1].rstrip() + ELLIPSIS


def checked_description(text: str) -> str:
    """A description by `metadata_line`'s rule; ValueError names the fix when it is too long to
    head a tool's description."""
    line = _one_line(text)
    if len(line) > MAX_DESCRIPTION_CHARS:
        raise ValueError(
            f"the description has {len(line)} characters; keep it under {MAX_DESCRIPTION_CHARS}: "
            "a phrase saying what the collection holds, e.g. 'the Node.js 20 API reference'"
        )
    return line


def _one_line(text: str) -> str:
    visible = (char for char in text if char.isspace() or unicodedata.category(char) not in HIDDEN_CATEGORIES)
    return " ".join("".join(visible).split())


def summary(file_types: Counter[str], folders: Counter[str]) -> str:
    """e.g. '120 documents (80 md, 40 html) from docs/guide (80), docs/api (40)', from how many
    documents have each file type and lie in each folder (`folder_of`), the largest first. Names
    come from the user's files, so each is one line of at most MAX_NAME_CHARS, and so is the whole
    (`metadata_line`)."""
    documents = sum(file_types.values())
    if not documents:
        return "an empty collection"
    kinds = _most(file_types, SHOWN_TYPES, lambda kind, count: f"{count} {kind}")
    if len(folders) == 1:
        places = next(iter(folders))
    else:
        places = _most(folders, SHOWN_FOLDERS, lambda folder, count: f"{folder} ({count})")
    plural = "document" if documents == 1 else "documents"
    return metadata_line(f"{documents} {plural} ({kinds}) from {places}")


def folder_of(source: str) -> str:
    """The folder a summary counts a document's source in: the first two levels of its folder (a
    file added alone is its own name)."""
    parent = PurePosixPath(source).parent
    return metadata_line("/".join(parent.parts[:2]) if parent.parts else source, MAX_NAME_CHARS)


def _most(counts: Counter, shown: int, phrase: Callable[[str, int], str]) -> str:
    common = sorted(counts.items(), key=lambda item: (-item[1], item[0]))  # ties in name order, however counted
    text = ", ".join(phrase(key, count) for key, count in common[:shown])
    return f"{text} and {len(common) - shown} more" if len(common) > shown else text
