"""File types whose text is laid out in lines: source code and configuration (sources/code.py reads
them). Their chunks keep their lines wherever they are shown, where prose's hard-wrapped lines
are joined; shared by the reader, which cuts them into lines, and the server, which shows them."""

from __future__ import annotations

LINE_LAID_TYPES = frozenset(
    "py pyi js mjs cjs jsx ts tsx go rs java c h cc cpp cxx hh hpp hxx cs rb php sh bash toml yaml yml json ini cfg sql".split()
)
"""As `files.file_type` names them: a file's suffix without its dot."""
