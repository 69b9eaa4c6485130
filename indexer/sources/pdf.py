"""The text of a PDF, page by page (pypdf), without what only repeats the page layout.

- Running headers and footers: a line among the first or last RUNNING_ZONE lines of a page that
  recurs (digits ignored, so "Page 3" and "Page 4" are one line) in that place on more than half
  of the pages, of a document of at least MIN_RUNNING_PAGES pages; a bare page number ("3",
  "- 3 -", "Page 3 of 9") there is dropped on any page. A line longer than RUNNING_LINE_CHARS is
  never one of these. A page's first line that starts or ends
  with its printed number, or its last line that ends with it ("Chapter 5: R Add-On Packages 23",
  whose title changes with the chapter), is a running header too, where the printed numbers of
  more than half of the pages follow their order (the page's index plus one offset).
- Table-of-contents lines: a title, a dot leader and a page number ("Introduction ..... 3").
- Words hyphenated across a line break are joined ("inter-\\nnational" -> "international"). A
  hyphen is kept where the word is a compound: where either part holds a hyphen already
  ("state-of-\\nthe-art") or the document spells the word with a hyphen elsewhere and never
  without; a break before a capital or a digit is left as it is.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import BinaryIO

import regex

from .outline import BlockText, NotReadable

RUNNING_ZONE = 2
MIN_RUNNING_PAGES = 3
RUNNING_LINE_CHARS = 160
"""A longer line is body text wherever it stands: a page whose text comes out as one line (some
PDF writers put no line breaks) is not its own running header."""
_PAGE_NUMBER = regex.compile(r"(?i)(?:page\s*)?[-–—\s]*\d{1,4}[-–—\s]*(?:(?:of|/)\s*\d{1,4})?")
_DOT_LEADER = regex.compile(r"\S.*?(?:\s*(?:\.\s?|…|·\s?)){4,}\s*(?:\d{1,4}|[ivxlcdm]{1,6})", regex.I)
_LEADING_NUMBER = regex.compile(r"\s*(\d{1,4})(?:\s+\S.*)?")
_TRAILING_NUMBER = regex.compile(r".*\S\s+(\d{1,4})\s*")
_NAMES_A_FILE = regex.compile(r"^microsoft \w+ - |\.(?:docx?|odt|rtf|tex|dvi|pdf|pptx?|xlsx?|indd|txt)$", regex.I)
"""A metadata title that a converter took from the source file's name."""
_NO_TITLE = frozenset({"untitled", "untitled document", "title", "document", "none"})
TITLE_LINES = 5
"""Lines at the top of the first page that may hold its title."""
MAX_TITLE_CHARS = 120
MAX_TITLE_WORDS = 15
"""A first line longer than this, or ending as a sentence or clause does, is text, not a title."""
_HYPHENATED = regex.compile(r"(\p{L}[\p{L}\-]*)-\n[ \t]*(\p{Ll}[\p{L}\-]*)")
_WORD = regex.compile(r"\p{L}[\p{L}\-]*\p{L}|\p{L}")


def pdf_text(path: Path | BinaryIO) -> tuple[str, BlockText]:
    """(title from the PDF's metadata, text with page marks). NotReadable for a stream that
    inflates past pypdf's limits (75 MB a stream, pypdf.Configuration: a bomb's stream is cut off
    there, not read whole); pypdf's other errors propagate."""
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import LimitReachedError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise NotReadable("encrypted PDF needs a password")
        pages = [(page.extract_text() or "").split("\n") for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or ""
    except LimitReachedError as error:
        raise NotReadable(f"it would inflate past pypdf's safety limits ({error}); exclude the file") from None
    return own_title(str(title), pages[0] if pages else []), page_text(pages)


def own_title(recorded: str, first_page: list[str]) -> str:
    """The PDF's title: the one its metadata records, unless that is empty or names a file (what
    a converter writes: "Microsoft Word - notes.docx", "report.tex"); else the first line of its
    first page that reads as a title; else "" (the file's name is used)."""
    recorded = " ".join(recorded.split())
    if recorded and not _NAMES_A_FILE.search(recorded) and recorded.lower() not in _NO_TITLE:
        return recorded
    for line in first_page[:TITLE_LINES]:
        line = " ".join(line.split())
        words = _WORD.findall(line)
        if (
            words
            and len(words) <= MAX_TITLE_WORDS
            and len(line) <= MAX_TITLE_CHARS
            and not line.endswith((".", ",", ":", ";"))
        ):
            return line
    return ""


def page_text(pages: list[list[str]]) -> BlockText:
    """The pages' lines, cleaned as the module says, as text with a mark where each page begins."""
    pages = [[line.rstrip() for line in lines if line.strip()] for lines in pages]
    running = _running_lines(pages)
    offset = _page_number_offset(pages)
    cleaned = []
    for index, lines in enumerate(pages):
        zone = set(range(RUNNING_ZONE)) | set(range(len(lines) - RUNNING_ZONE, len(lines)))
        cleaned.append(
            "\n".join(
                line
                for at, line in enumerate(lines)
                if not (
                    at in zone
                    and len(line) <= RUNNING_LINE_CHARS
                    and (
                        _shape(line) in running
                        or _PAGE_NUMBER.fullmatch(line.strip())
                        or (offset is not None and _edge_number(lines, at) == index + offset)
                    )
                )
                and not _DOT_LEADER.fullmatch(line.strip())
            )
        )
    words = Counter(word.lower() for page in cleaned for word in _WORD.findall(page))
    text = BlockText()
    for page, content in enumerate(cleaned, 1):
        text.page(page)
        text.add(join_hyphenated(content, words))
    return text


def _running_lines(pages: list[list[str]]) -> set[str]:
    """The shapes of the lines that recur at the top or bottom of more than half of the pages."""
    if len(pages) < MIN_RUNNING_PAGES:
        return set()
    seen = Counter()
    for lines in pages:
        edges = lines[:RUNNING_ZONE] + lines[-RUNNING_ZONE:]
        seen.update({_shape(line) for line in edges if len(line) <= RUNNING_LINE_CHARS})
    return {shape for shape, count in seen.items() if count > len(pages) / 2}


def _page_number_offset(pages: list[list[str]]) -> int | None:
    """The offset from a page's index (from 0) to its printed number, where more than half of the
    pages carry that number where `_edge_number` finds it; else None."""
    if len(pages) < MIN_RUNNING_PAGES:
        return None
    offsets = Counter()
    for index, lines in enumerate(pages):
        numbers = {_edge_number(lines, 0), _edge_number(lines, len(lines) - 1)}
        offsets.update({number - index for number in numbers if number is not None})
    common = [offset for offset, count in offsets.items() if count > len(pages) / 2]
    return common[0] if common else None


def _edge_number(lines: list[str], at: int) -> int | None:
    """The number that starts a page's first line or ends its first or last line (a footnote at
    the bottom starts with its number: not a header)."""
    if at not in {0, len(lines) - 1}:
        return None
    found = (at == 0 and _LEADING_NUMBER.fullmatch(lines[at])) or _TRAILING_NUMBER.fullmatch(lines[at])
    return int(found.group(1)) if found else None


def _shape(line: str) -> str:
    return " ".join(regex.sub(r"\d+", "#", line).split()).lower()


def join_hyphenated(text: str, words: Counter[str]) -> str:
    """`text` with words hyphenated across line breaks joined; `words` counts the document's words
    (hyphenated forms included) to tell a compound from a word cut in two."""

    def joined(match: regex.Match) -> str:
        before, after = match.group(1), match.group(2)
        whole, compound = f"{before}{after}", f"{before}-{after}"
        if "-" in before or "-" in after or (words[compound.lower()] and not words[whole.lower()]):
            return compound
        return whole

    return _HYPHENATED.sub(joined, text)
