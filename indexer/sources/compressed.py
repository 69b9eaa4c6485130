"""Compressed files (.gz, .bz2, .xz) read as the file inside: `guide.md.gz` is the Markdown page
`guide.md`, `NEWS.gz` the plain text `NEWS`.

The file is decompressed a chunk at a time and given up once it passes DECOMPRESSED_LIMIT: a bomb
is a few kilobytes that inflate to gigabytes, so only what the limit allows is ever held, never
the whole of a read.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import PurePosixPath
from typing import BinaryIO

from .archive_limits import CHUNK, MB
from .document import FileInput, Skip, error_text

DECOMPRESSED_LIMIT = 64 * MB
"""The file inside is held whole, then decoded and cut into sentences at several times its size,
within the reader's --file-memory (1 GB by default): 64 MB is more text than any book or manual,
and a compressed log or dump past it is better unpacked, or left out, than indexed whole."""
FORMATS: dict[str, tuple[str, Callable[[BinaryIO], BinaryIO]]] = {
    ".gz": ("gzip", lambda raw: gzip.GzipFile(fileobj=raw)),
    ".bz2": ("bzip2", bz2.BZ2File),
    ".xz": ("xz", lzma.LZMAFile),
}
"""Suffix → the format's name (also its command-line tool, whose -t tests a file) and its stdlib reader."""
COMPRESSED_SUFFIXES = frozenset(FORMATS)
DAMAGE = (OSError, EOFError, zlib.error, lzma.LZMAError)
"""What the stdlib readers raise on data that is not their format, or is cut short."""


def inner_name(name: str) -> str:
    """The name of the file inside a compressed one (`guide.md` for `guide.md.gz`); any other name as it is."""
    suffix = PurePosixPath(name).suffix
    return name[: -len(suffix)] if suffix.lower() in FORMATS else name


def decompressed(input: FileInput) -> FileInput:
    """The file inside `input`, a compressed file: its inner name and bytes; Skip past
    DECOMPRESSED_LIMIT or for data that is not of the format its suffix names."""
    kind, reader = FORMATS[input.suffix]
    pieces: list[bytes] = []
    size = 0
    try:
        with input.open() as raw, reader(raw) as stream:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                if size > DECOMPRESSED_LIMIT:
                    limit = DECOMPRESSED_LIMIT // MB
                    raise Skip(
                        f"unreadable: it decompresses to more than {limit} MB (limit {limit} MB); "
                        "unpack it or exclude it"
                    )
                pieces.append(chunk)
    except DAMAGE as error:
        if getattr(error, "errno", None) is not None:  # the disk failed, not the data
            raise Skip(f"unreadable: {error_text(error)}") from None
        raise Skip(f"unreadable: not a valid {kind} file ({error}); test it with `{kind} -t` or exclude it") from None
    return replace(input, name=inner_name(input.name), data=b"".join(pieces))
