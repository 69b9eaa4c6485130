"""Rule-based sentence segmentation (no model, no download).

Text is first cut into blocks: paragraphs (a blank line always ends a sentence), Markdown and
reStructuredText headings, and list items, each of which stands alone even without a full stop.
A single newline inside a paragraph does not split, so hard-wrapped text keeps its sentences.
Blocks are then split after `.`, `!`, `?` and `…` when a sentence plausibly starts next, except
after abbreviations ("Dr.", "e.g."), initials ("J. R. R. Tolkien") and inside numbers ("3.14").
In Chinese and Japanese text, written without spaces, a full stop, exclamation or question mark
splits without a following space: the ideographic and full-width marks (。！？．) and their
half-width and small forms (｡﹒﹗﹖), and `.`, `!` and `?` where a Han or kana letter follows
(`.` only after one too), except a full-width or half-width point between digits ("３．１４").
No text is dropped: short sentences such as
"1995." are kept, and every non-space character falls in exactly one sentence. A sentence longer
than MAX_SENTENCE_CHARS (a line of a table dump, a minified file, a text without full stops) is cut
into pieces at spaces, so that no later step holds one sentence of megabytes.
"""

from __future__ import annotations

import regex

SPLITTER_VERSION = "rules-2"
MAX_SENTENCE_CHARS = 1000
"""The longest sentence kept whole: about 200 tokens of English, under the embedding window."""

ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof st jr sr sen rep gov gen col lt sgt capt cmdr adm maj rev hon pres supt fr
    mt ft ave blvd rd inc ltd co corp bros dept univ assn est approx vs etc cf al fig figs eq eqs
    no nos vol vols pp p ch sec art op ed eds trans repr ca c b d fl viz jan feb mar apr jun jul
    aug sep sept oct nov dec mon tue wed thu fri sat sun
    """.split()
)
"""Lower-cased, without the final period."""

SENTENCE_STARTERS = frozenset(
    "the this that these those it its he she they we i you there here in on at a an but and or so "
    "however his her their our my as after before when while if for from with by to".split()
)
"""Words that, capitalised after an ambiguous abbreviation such as "U.S.", start a new sentence."""

WIDE_STOPS = "。｡．﹒！？﹗﹖"
"""Marks that end a sentence in text written without spaces: ideographic, full-width, half-width and small forms."""
WIDE_POINTS = "．｡﹒"
"""Those of them that also stand between digits ("３．１４")."""
_CJK_LETTER = r"[\p{Han}\p{Hiragana}\p{Katakana}]"
_WIDE_CLOSERS = "\"'”’」』）)】〕》〉｣"
_TERMINAL = regex.compile(
    rf"""(?:\.{{2,}}|…|[.!?]+)["'”’»)\]]*(?=\s)"""
    rf"|[{WIDE_STOPS}]+[{_WIDE_CLOSERS}]*"
    rf"|[!?]+[{_WIDE_CLOSERS}]*(?={_CJK_LETTER})"
    rf"|(?<={_CJK_LETTER})\.[{_WIDE_CLOSERS}]*(?={_CJK_LETTER})"
)
_NEXT_START = regex.compile(r"""\s*(["'“‘«(\[]*)(\p{Lu}|\p{N}|[^\p{Latin}\p{P}\p{S}\s])""")
_MULTI_PERIOD = regex.compile(r"(?:\p{L}{1,2}\.)+\p{L}{1,2}")
_WORD_WINDOW = 40
_CLOSERS = "\"'”’»)]"
_OPENERS = "\"'“‘«(["
_HEADING = regex.compile(r"#{1,6}\s\S")
_LIST_ITEM = regex.compile(r"(?:[-*+•]|\d{1,3}[.)]|[a-zA-Z][.)])\s+\S")
_UNDERLINE = regex.compile(r"([=\-~^`'\"*+#:.])\1{2,}\s*")
_BLANK_LINE = regex.compile(r"\n[ \t\r\f\v]*\n")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans (start, end) of the sentences of `text`, in order.

    Each span is stripped of surrounding whitespace, spans never overlap and never are empty,
    and together they cover every non-whitespace character. Whitespace-only text gives [].
    """
    spans: list[tuple[int, int]] = []
    for block_start, block_end in _blocks(text):
        for start, end in _split_block(text, block_start, block_end):
            spans.extend(cut_span(text, start, end, MAX_SENTENCE_CHARS))
    return spans


def cut_span(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """text[start:end] (stripped) in stripped pieces of at most `max_chars` characters, cut at the
    last space or line break of each piece where it has one."""
    pieces = []
    while end - start > max_chars:
        space = max(text.rfind(" ", start + 1, start + max_chars), text.rfind("\n", start + 1, start + max_chars))
        cut = space if space > start else start + max_chars
        stop = cut
        while text[stop - 1].isspace():
            stop -= 1
        pieces.append((start, stop))
        start = cut
        while text[start].isspace():
            start += 1
    pieces.append((start, end))
    return pieces


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraphs, headings and list items, as stripped spans."""
    blocks: list[tuple[int, int]] = []
    paragraph_start = 0
    for separator in [*_BLANK_LINE.finditer(text), None]:
        paragraph_end = separator.start() if separator else len(text)
        blocks.extend(_line_blocks(text, paragraph_start, paragraph_end))
        if separator:
            paragraph_start = separator.end()
    return [span for span in (_strip(text, s, e) for s, e in blocks) if span]


def _line_blocks(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a paragraph before each heading or list item, and after each heading or underline."""
    blocks: list[tuple[int, int]] = []
    block_start = start
    position = start
    for line in text[start:end].split("\n"):
        line_end = position + len(line)
        stripped = line.strip()
        if _HEADING.match(stripped) or _LIST_ITEM.match(stripped):
            blocks.append((block_start, position))
            block_start = position
            if _HEADING.match(stripped):
                blocks.append((block_start, line_end))
                block_start = line_end
        elif _UNDERLINE.fullmatch(stripped) and position > block_start:
            blocks.append((block_start, line_end))
            block_start = line_end
        position = line_end + 1
    blocks.append((block_start, end))
    return blocks


def _split_block(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans = []
    sentence_start = start
    block = text[start:end]
    for match in _TERMINAL.finditer(block):
        cut = start + match.end()
        if cut >= end or not _is_boundary(block, match):
            continue
        spans.append((sentence_start, cut))
        sentence_start = cut
    spans.append((sentence_start, end))
    return [span for span in (_strip(text, s, e) for s, e in spans) if span]


def _is_boundary(block: str, match: regex.Match) -> bool:
    """Whether the terminal punctuation in `match` ends a sentence."""
    terminal = match.group()
    if terminal[0] in WIDE_STOPS:
        between_digits = match.start() > 0 and block[match.start() - 1].isdigit() and block[match.end()].isdigit()
        return not (terminal in WIDE_POINTS and between_digits)
    if not block[match.end()].isspace():  # a Han or kana letter follows: no space comes between sentences
        return True
    following = _NEXT_START.match(block, match.end())
    if not following:
        return False
    core = terminal.rstrip(_CLOSERS)
    if not core.endswith(".") or core.startswith(".."):
        return True
    before = block[max(0, match.start() - _WORD_WINDOW) : match.start()].split()
    word = before[-1].lstrip(_OPENERS) if before else ""
    if len(word) == 1 and word.isalpha() and word.isupper():
        return False
    if _MULTI_PERIOD.fullmatch(word):
        next_word = block[following.start(2) : following.start(2) + _WORD_WINDOW].split()[0].strip(".,;:!?\"'”’")
        return next_word.lower() in SENTENCE_STARTERS
    return word.lower() not in ABBREVIATIONS


def _strip(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None
