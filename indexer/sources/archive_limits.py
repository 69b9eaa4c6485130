"""Bounds on what a zip-based document (.docx, and any later zip-based format) may inflate to,
checked before its parser opens it: a zip bomb is a few megabytes on disk and gigabytes inflated.

Each member must be stored or deflated (the only methods ECMA-376 allows in a package), declare at
most MEMBER_LIMIT bytes (XML_PART_LIMIT for an XML part, ARCHIVE_LIMIT for all together) and, above RATIO_FLOOR, at most RATIO_LIMIT
times its compressed size; then it is inflated once, a chunk at a time, to check that it holds no
more than it declares.

Why declared sizes bound memory, and why they are checked against the data: `zipfile` never
returns more than a member's declared `file_size` (`ZipExtFile._read1` cuts every piece to the
bytes left of it), but one unbounded read (`ZipFile.read`, as python-docx reads parts) inflates
up to `ZipExtFile.MAX_N` (1 GiB) of deflate data in a single call before cutting it, and inflates
a bzip2 or LZMA member whole. A member that understates its size would cost that memory.
"""

from __future__ import annotations

import copy
import zipfile
from pathlib import Path
from typing import BinaryIO

from .outline import NotReadable

MB = 1 << 20
MEMBER_LIMIT = 256 * MB
"""A part of a long Word document is tens of megabytes of XML; its parsed tree takes several times that."""
XML_PART_LIMIT = 20 * MB
"""An XML part is parsed whole into a tree of about 25 bytes per byte of XML, at a few megabytes a
second (python-docx); the text of 1,500 pages is about 20 MB of Word XML (bench/README.md, *Bad files*)."""
ARCHIVE_LIMIT = 1024 * MB
"""Twice the largest document Word saves with its images (512 MB)."""
RATIO_LIMIT = 100
"""Word's XML deflates 5 to 30 times; a bomb's run of one byte, a thousand times."""
RATIO_FLOOR = MB
"""Smaller members may deflate any amount: they cannot cost much memory."""
CHUNK = MB
READABLE_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
FIX = "exclude the file, or split it if it is a genuine document"


def check_zip(path: Path | BinaryIO) -> None:
    """NotReadable naming the first member that breaks a bound, and by how much; zipfile.BadZipFile
    for what is not a zip archive."""
    with zipfile.ZipFile(path) as archive:
        members = [info for info in archive.infolist() if not info.is_dir()]
        for info in members:
            _check_declared(info)
        total = sum(info.file_size for info in members)
        if total > ARCHIVE_LIMIT:
            raise NotReadable(f"its parts would inflate to {_size(total)} (limit {_size(ARCHIVE_LIMIT)}); {FIX}")
        for info in members:
            _check_inflated(archive, info)


def _check_declared(info: zipfile.ZipInfo) -> None:
    if info.compress_type not in READABLE_METHODS:
        raise NotReadable(f"{info.filename} uses compression method {info.compress_type}, not deflate; {FIX}")
    if info.file_size > MEMBER_LIMIT:
        raise NotReadable(
            f"{info.filename} would inflate to {_size(info.file_size)} (limit {_size(MEMBER_LIMIT)}); {FIX}"
        )
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > RATIO_FLOOR and ratio > RATIO_LIMIT:
        raise NotReadable(
            f"{info.filename} would inflate to {_size(info.file_size)}, {ratio:,.0f} times its compressed size "
            f"(limit {RATIO_LIMIT} times); {FIX}"
        )
    if info.filename.lower().endswith(".xml") and info.file_size > XML_PART_LIMIT:
        raise NotReadable(
            f"{info.filename} holds {_size(info.file_size)} of XML (limit {_size(XML_PART_LIMIT)}); {FIX}"
        )


def _check_inflated(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Inflate the member one chunk at a time, as if it declared a byte more than it does: reading
    past its declared size means its header understates it."""
    probe = copy.copy(info)
    probe.file_size = info.file_size + 1
    probe.CRC = None  # zipfile then checks none: a CRC over data cut short would fail before it is counted
    inflated = 0
    with archive.open(probe) as member:
        while inflated <= info.file_size and (chunk := member.read(CHUNK)):
            inflated += len(chunk)
    if inflated > info.file_size:
        raise NotReadable(f"{info.filename} holds more than the {_size(info.file_size)} its header declares; {FIX}")


def _size(count: int) -> str:
    if count >= 1 << 30:
        return f"{count / (1 << 30):.1f} GB"
    return f"{count / MB:.0f} MB" if count >= MB else f"{count:,} bytes"
