"""What a collection is, in a phrase a model reads: the description given to arag-index, or a
summary derived from the documents (how many, of which file types, from which folders).

Both live in the manifest, so a server can say what it searches before it opens any table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

MAX_DESCRIPTION_CHARS = 300
SHOWN_TYPES = 4
SHOWN_FOLDERS = 3


def checked_description(text: str) -> str:
    """A description on one line; ValueError names the fix when it is too long to head a tool's description."""
    line = " ".join(text.split())
    if len(line) > MAX_DESCRIPTION_CHARS:
        raise ValueError(
            f"the description has {len(line)} characters; keep it under {MAX_DESCRIPTION_CHARS}: "
            "a phrase saying what the collection holds, e.g. 'the Node.js 20 API reference'"
        )
    return line


def summary(sources: Sequence[str], file_types: Sequence[str]) -> str:
    """e.g. '120 documents (80 md, 40 html) from docs/guide (80), docs/api (40)': one source and
    file type per document; folders are the first two levels of each source's folder (a file added alone is its
    own name), the largest first."""
    if not sources:
        return "an empty collection"
    types = Counter(file_types)
    folders = Counter(_folder(source) for source in sources)
    kinds = _most(types, SHOWN_TYPES, lambda kind, count: f"{count} {kind}")
    if len(folders) == 1:
        places = next(iter(folders))
    else:
        places = _most(folders, SHOWN_FOLDERS, lambda folder, count: f"{folder} ({count})")
    plural = "document" if len(sources) == 1 else "documents"
    return f"{len(sources)} {plural} ({kinds}) from {places}"


def _folder(source: str) -> str:
    parent = PurePosixPath(source).parent
    return "/".join(parent.parts[:2]) if parent.parts else source


def _most(counts: Counter, shown: int, phrase: Callable[[str, int], str]) -> str:
    common = counts.most_common()
    text = ", ".join(phrase(key, count) for key, count in common[:shown])
    return f"{text} and {len(common) - shown} more" if len(common) > shown else text
