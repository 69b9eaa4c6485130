"""Small files that inflate to gigabytes: what the readers must refuse before inflating them (or, for
a compressed file, stop inflating past its cap)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

MB = 1 << 20
DOCUMENT_XML = "word/document.xml"


def yaml_alias_bomb(levels: int = 9, references: int = 9) -> str:
    """Markdown whose front matter is a "billion laughs": each anchor lists the previous one
    `references` times, so `levels` levels name references**levels strings."""
    lines = ["---", f"l0: &l0 [{', '.join(['lol'] * references)}]"]
    lines += [f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * references)}]" for level in range(1, levels)]
    return "\n".join([*lines, "---", "# Laughs", "", "A note about laughter.", ""])


def docx_bomb(path: Path, padding: int) -> None:
    """A valid .docx whose word/document.xml is an empty body padded with `padding` spaces,
    deflated at level 9 (about 1 KB a MB) and written as a stream."""
    head, tail = _document_xml()
    with docx_without_document(path) as package, package.open(DOCUMENT_XML, "w", force_zip64=True) as document:
        for piece in _padded(head, tail, padding):
            document.write(piece)


def understated_docx(path: Path, padding: int) -> None:
    """docx_bomb whose word/document.xml declares, in both its headers, its compressed size as its size."""
    head, tail = _document_xml()
    with docx_without_document(path) as package:
        package.writestr(DOCUMENT_XML, b"".join(_padded(head, tail, padding)))
        info = package.getinfo(DOCUMENT_XML)
    data = bytearray(path.read_bytes())
    name = DOCUMENT_XML.encode()
    for signature, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        at = next(i for i in _find_all(data, signature) if data[i + name_at : i + name_at + len(name)] == name)
        data[at + size_at : at + size_at + 4] = struct.pack("<I", info.compress_size)
    path.write_bytes(bytes(data))


def pdf_flate_bomb(path: Path, padding: int) -> None:
    """A one-page PDF whose content stream shows a line of text, then `padding` spaces, deflated."""
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, StreamObject

    compressor = zlib.compressobj(9)
    pieces = [compressor.compress(b"BT /F1 12 Tf 72 720 Td (Flate bomb) Tj ET")]
    block = b" " * MB
    pieces += [compressor.compress(block) for _ in range(padding // MB)]
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    stream = StreamObject()
    stream.set_data(b"".join([*pieces, compressor.flush()]))
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    page[NameObject("/Contents")] = writer._add_object(stream)
    font = {"/Type": "/Font", "/Subtype": "/Type1", "/BaseFont": "/Helvetica"}
    fonts = {NameObject("/F1"): DictionaryObject({NameObject(k): NameObject(v) for k, v in font.items()})}
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(fonts)})
    writer.write(path)


def compressed_bomb(path: Path, megabytes: int) -> None:
    """A .gz, .bz2 or .xz file (by `path`'s suffix) that decompresses to `megabytes` MB of zeros:
    one compressed megabyte repeated, as concatenated members (streams) that every reader reads on
    (a gigabyte is a megabyte on disk, written at once)."""
    compress = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[path.suffix]
    path.write_bytes(compress(bytes(MB)) * megabytes)


def _document_xml() -> tuple[bytes, bytes]:
    """A new document's word/document.xml, cut where its body begins."""
    import docx

    template = io.BytesIO()
    docx.Document().save(template)
    with zipfile.ZipFile(template) as source:
        head, tail = source.read(DOCUMENT_XML).split(b"<w:body>", 1)
    return head + b"<w:body>", tail


def docx_without_document(path: Path) -> zipfile.ZipFile:
    """An open .docx holding every part of a new document but word/document.xml."""
    import docx

    template = io.BytesIO()
    docx.Document().save(template)
    package = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9)
    with zipfile.ZipFile(template) as source:
        for member in source.infolist():
            if member.filename != DOCUMENT_XML:
                package.writestr(member, source.read(member))
    return package


def _padded(head: bytes, tail: bytes, padding: int) -> Iterator[bytes]:
    yield head
    block = b" " * MB
    for _ in range(padding // MB):
        yield block
    yield tail


def _find_all(data: bytearray, signature: bytes) -> Iterator[int]:
    at = data.find(signature)
    while at >= 0:
        yield at
        at = data.find(signature, at + 1)
