"""What the tools' results share, as structured models and as text, and what the semantic searches
(semantic_search, naive_embedding_search, semantic_search with queries) return; each tool's own
output is in its module in server/tools/.

Hosts differ in what they show the model (some only the structured content, some only the
text), so both carry everything: ids, titles, sources, snippets, chunk text and notices.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from arag_mcp.indexer.index.chunks import PATH_SEPARATOR, below_title
from arag_mcp.server.search.conversations import DeliveryStatus
from arag_mcp.server.search.limits import METADATA_FIELDS, METADATA_VALUE_CHARS
from arag_mcp.server.search.snippets import SNIPPET_SEPARATOR, Snippet
from pydantic import BaseModel, Field, PrivateAttr

if TYPE_CHECKING:
    from arag_mcp.indexer.index.chunks import ChunkHeader
    from arag_mcp.indexer.index.keywords import ChunkCount
    from arag_mcp.indexer.index.ranked import Hit, PassedOver
    from arag_mcp.server.search.conversations import Delivery

WHOLE_CHUNK_NOTE = "A result marked (whole chunk) shows the complete chunk: no need to read it."
ALREADY_SENT = "already sent"
ALREADY_SENT_NOTE = f"A result marked '{ALREADY_SENT}' holds only text this conversation was sent before: it keeps its place, without the text."
CONVERSATION_FIELD = Field(description="the conversation's handle: pass it back as `conversation` in every later call")


SOURCE_FIELD = Field(None, description="the chunk's source, where results differ in it (else the output's `source`)")
SECTION_FIELD = Field(None, description="the headings the chunk starts under, outermost first, joined with ' › '")
PAGES_FIELD = Field(None, description="the pages the chunk spans, e.g. '3' or '3-4'")
WHOLE_CHUNK_FIELD = Field(
    None, description="true when the snippet is the whole chunk: it counts as read, chunk_read adds nothing"
)
EXTENT_FIELD = Field(None, description="how much of its chunk a partial snippet shows, e.g. '2 of 7 sentences'")
ALREADY_SENT_FIELD = Field(
    None, description="true when this conversation was sent all of this result's text before: none is sent again"
)
SENTENCES_ALREADY_SENT_FIELD = Field(
    None, description="matched sentences left out because this conversation was sent them before"
)
FILE_TYPE_FIELD = Field(description='what the document was read as: "md", "html", "pdf", "jsonl", "txt", ...')
METADATA_FIELD = Field(
    None,
    description=f"the record's own fields (JSON/JSONL records): at most {METADATA_FIELDS}, "
    f"each value cut to {METADATA_VALUE_CHARS} characters, nested values as JSON",
)


class ChunkFields(BaseModel):
    """What every search result tells of its chunk."""

    chunk_id: str
    title: str
    source: str | None = SOURCE_FIELD
    section: str | None = SECTION_FIELD
    pages: str | None = PAGES_FIELD
    file_type: str = FILE_TYPE_FIELD
    metadata: dict[str, Any] | None = METADATA_FIELD


class DeliveryFields(BaseModel):
    """What every search result tells of its text: whether this conversation was sent it, and the
    text itself where the tool sends whole chunks."""

    whole_chunk: bool | None = WHOLE_CHUNK_FIELD
    extent: str | None = EXTENT_FIELD
    already_sent: bool | None = ALREADY_SENT_FIELD
    sentences_already_sent: int | None = SENTENCES_ALREADY_SENT_FIELD
    status: DeliveryStatus | None = Field(None, description="whether the chunk's full text is in `text`")
    text: str | None = Field(None, description="the chunk's full text, where the tool returns whole chunks")


class SemanticMatchFields(BaseModel):
    score: float = Field(description="cosine similarity of the chunk's best sentence (or vector) to the query")
    sentences: list[str] | None = Field(
        None,
        description="the whole chunk's sentences when it is short, else its matched sentences (long ones cut to "
        "their start, each after the sentence before where it opens with a pronoun), in document order",
    )
    queries: list[int] | None = Field(None, description="which queries (from 0) found this chunk")


# A result is its chunk, how it matched, then its text. Pydantic orders fields from the last base to
# the first, so the bases are listed in reverse. No docstring: it would become the output schema's.
class SemanticResult(DeliveryFields, SemanticMatchFields, ChunkFields):
    pass


class ToolOutput(BaseModel):
    message: str
    conversation: str = CONVERSATION_FIELD
    _index_wide: frozenset[str] = PrivateAttr(default=frozenset())
    """The result fields ("source", "file_type") every chunk of the index shares: the server's
    instructions name the collection, so the text does not repeat them call after call."""


class KeywordCount(BaseModel):
    keyword: str
    chunks: int = Field(description="chunks this keyword matches (at least this many when chunks_up_to is given)")
    chunks_up_to: int | None = Field(None, description="at most this many: the count was not settled")


class PassedOverResult(BaseModel):
    rank: int = Field(description="where it ranked")
    chunk_id: str
    title: str


class SemanticSearchOutput(ToolOutput):
    source: str | None = Field(None, description="the source of every result, when they share one")
    results: list[SemanticResult]
    passed_over: list[PassedOverResult] | None = Field(
        None, description="chunks that ranked among these but whose text shown here this conversation was already sent"
    )
    next_offset: int | None = Field(None, description="pass as `offset` to see the results after these")


def place_fields(chunk: ChunkHeader) -> dict[str, str | None]:
    """Where a chunk sits in its document: its heading path (less a heading that repeats the
    title shown beside it) and pages, where it has them."""
    pages = chunk.pages
    return {
        "section": PATH_SEPARATOR.join(below_title(chunk.title, chunk.heading_path)) or None,
        "pages": None if pages is None else str(pages[0]) if pages[0] == pages[1] else f"{pages[0]}-{pages[1]}",
    }


def bounded_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A document's metadata as results show it: its first METADATA_FIELDS non-null fields, long
    values cut (readers store nested values as JSON text, so they are cut as text)."""
    kept = [(key, value) for key, value in metadata.items() if value is not None][:METADATA_FIELDS]
    return {key: _cut(value) if isinstance(value, str) else value for key, value in kept}


def _cut(value: str) -> str:
    return value if len(value) <= METADATA_VALUE_CHARS else value[:METADATA_VALUE_CHARS] + "…"


def hit_fields(hit: Hit, source: str | None, delivery: Delivery | None, snippet: Snippet) -> dict:
    """What every search result says of its chunk: id, title, source (unless said once for all),
    section and pages, file type, metadata; whether it is shown whole or was sent before (then
    nothing of its text is sent); where whole chunks are sent, its delivery and text."""
    already = delivery.status == "read_before" if delivery is not None else snippet.nothing_new
    return {
        "chunk_id": hit.chunk.chunk_id,
        "title": hit.chunk.title,
        "source": None if source is not None else hit.chunk.source,
        **place_fields(hit.chunk),
        "file_type": hit.chunk.file_type,
        "metadata": bounded_metadata(hit.chunk.metadata) or None,
        "whole_chunk": (delivery is None and snippet.whole and not already) or None,
        "extent": snippet.extent if delivery is None and not already else None,
        "already_sent": already or None,
        "sentences_already_sent": (snippet.already_sent if delivery is None and not already else 0) or None,
        "status": None if delivery is None else delivery.status,
        "text": delivery.chunk.text if delivery is not None and delivery.status == "ok" and delivery.chunk else None,
    }


def shared_source(hits: list[Hit]) -> str | None:
    """The source every hit has, said once instead of on every hit."""
    sources = {hit.chunk.source for hit in hits}
    return sources.pop() if len(sources) == 1 else None


def chunks_phrase(count: ChunkCount) -> str:
    """'1 chunk', '6 chunks', 'at least 3 (up to 40) chunks'."""
    if count.exact:
        return f"{count.at_least} {'chunk' if count.at_least == 1 else 'chunks'}"
    return f"at least {count.at_least} (up to {count.at_most}) chunks"


def passed_over_results(passed: list[PassedOver]) -> list[PassedOverResult] | None:
    return [PassedOverResult(rank=p.rank, chunk_id=p.chunk_id, title=p.title) for p in passed] or None


def passed_over_text(passed: list[PassedOver]) -> str:
    """The results left out as sent before, named together: their places keep new text."""
    if not passed:
        return ""
    named = ", ".join(f"[{p.rank}] {p.chunk_id} ({p.title})" for p in passed)
    return (
        f" Left out, as this conversation was already sent what they would show here: {named}; "
        "chunk_read gives a chunk whole (again: true if it was read before)."
    )


def same_text_note(same_text: Mapping[str, list[tuple[str, str]]] | None, shown: list[str]) -> str:
    """The near-duplicates left out, each named with the result whose text it nearly repeats."""
    named = [
        f"[{rank}] also as {chunk_id} ({title})"
        for rank, original in enumerate(shown, 1)
        for chunk_id, title in (same_text or {}).get(original, [])
    ]
    return f" Left out as nearly the same text as a result shown: {'; '.join(named)}." if named else ""


def next_offset_text(offset: int | None, after_shown: int | None = None) -> str:
    """Where the ranking goes on; said to be a place in the ranking where that is not the count of
    results shown (`after_shown`: a keyword's best chunk came from further down, or chunks were
    passed over)."""
    if offset is None:
        return ""
    place = " (the ranking's place after this page)" if after_shown is not None and offset != after_shown else ""
    return f" More results: repeat with offset={offset}{place}."


def semantic_output(
    hits: list[Hit],
    conversation: str,
    notice: str,
    deliveries: list[Delivery] | None,
    snippets: list[Snippet],
    ranked_by: str,
    passed_over: list[PassedOver] = (),
    next_offset: int | None = None,
    same_text: Mapping[str, list[tuple[str, str]]] | None = None,
) -> SemanticSearchOutput:
    source = shared_source(hits)
    results = []
    for at, (hit, snippet) in enumerate(zip(hits, snippets)):
        fields = hit_fields(hit, source, None if deliveries is None else deliveries[at], snippet)
        sentences = None if fields["already_sent"] else snippet.sentences
        results.append(SemanticResult(**fields, score=round(hit.score, 4), sentences=sentences))
    if results:
        count = f"{len(results)} {'chunk' if len(results) == 1 else 'chunks'} ranked by {ranked_by}."
        partial = "Matched sentences marked 'k of n sentences' are partial: chunk_read the relevant ids."
        message = f"{count} {next_step(deliveries, partial, results)}"
    else:
        message = "No chunk is left to show." if passed_over else "The index is empty."
    message += same_text_note(same_text, [hit.chunk.chunk_id for hit in hits])
    message += passed_over_text(list(passed_over)) + next_offset_text(next_offset)
    return SemanticSearchOutput(
        message=with_notice(notice, message),
        conversation=conversation,
        source=source,
        results=results,
        passed_over=passed_over_results(list(passed_over)),
        next_offset=next_offset,
    )


def next_step(deliveries: list[Delivery] | None, partial: str, results: Sequence[DeliveryFields]) -> str:
    """What the model should do next: read the chunks, or (whole chunks returned) nothing more; and
    what the marks on the results mean."""
    notes = [WHOLE_CHUNK_NOTE] if any(r.whole_chunk for r in results) else []
    notes += [ALREADY_SENT_NOTE] if any(r.already_sent or r.sentences_already_sent for r in results) else []
    if deliveries is None:
        return " ".join([partial, *notes] if any(r.extent for r in results) else notes)
    held_back = [d.chunk_id for d in deliveries if d.status == "not_sent"]
    note = " ".join(["Full chunk texts are included.", *notes])
    return f"{note} Not sent (size limit): {held_back}; search again for them." if held_back else note


def with_notice(notice: str, message: str) -> str:
    return f"{notice} {message}".strip()


def semantic_text(output: SemanticSearchOutput) -> str:
    rows = [
        (
            r,
            f"{r.score:.4f}" + (f" | queries: {r.queries}" if r.queries is not None else ""),
            f"matched: {(' ' if r.whole_chunk else SNIPPET_SEPARATOR).join(r.sentences or [])}",
        )
        for r in output.results
    ]
    return ranked_text(output, output.source, rows)


def ranked_text(output: ToolOutput, source: str | None, rows: Sequence[tuple[Any, str, str]]) -> str:
    """A ranked search's text: its message, the `source` and file type every result shares (each
    said once, unless the whole index shares it), then each result (its ChunkFields and
    DeliveryFields) with its score and body; results sent before in one line each."""
    lines = [output.message]
    if source is not None and "source" not in output._index_wide:
        lines.append(f"source (every result): {source}")
    types = {result.file_type for result, _, _ in rows}
    shared_type = types.pop() if len(rows) > 1 and len(types) == 1 else None
    if shared_type is not None and "file_type" not in output._index_wide:
        lines.append(f"type (every result): {shared_type}")
    for rank, (result, score, body) in enumerate(rows, 1):
        if result.already_sent:
            lines.append(already_sent_text(rank, result.chunk_id, result.title))
            continue
        source = f" | source: {result.source}" if result.source is not None else ""
        kind = f" | type: {result.file_type}" if shared_type is None else ""
        whole = " (whole chunk)" if result.whole_chunk else f" ({result.extent})" if result.extent else ""
        place = place_text(result.section, result.pages)
        lines.append(
            f"[{rank}] chunk_id: {result.chunk_id} | title: {result.title}{source}{place}{kind} | score: {score}{whole}"
        )
        if result.metadata:
            lines.append(f"    metadata: {metadata_text(result.metadata)}")
        if result.status is None or result.status == "not_sent":
            lines.append(f"    {body}{omitted_text(result.sentences_already_sent)}")
        if result.status == "ok":
            lines.append(result.text or "")
    return with_conversation(lines, output.conversation)


def already_sent_text(rank: int, chunk_id: str, title: str) -> str:
    """A result whose text the conversation has: its place, id and title, in one line."""
    return f"[{rank}] {chunk_id} | {title} — {ALREADY_SENT}"


def omitted_text(count: int | None) -> str:
    """After a snippet: how many of its matched sentences were left out as sent before."""
    if not count:
        return ""
    return f" (+{count} matched {'sentence' if count == 1 else 'sentences'} {ALREADY_SENT})"


def metadata_text(metadata: dict[str, Any]) -> str:
    """Metadata on one line, as JSON (unambiguous for values holding commas or quotes)."""
    return json.dumps(metadata, ensure_ascii=False)


def snippet_text(snippet: Snippet, whole: bool) -> str:
    """A result's snippet as one text: a whole chunk's sentences joined as its text joins them (by a
    space, or lines of code by a line break), a snippet's by SNIPPET_SEPARATOR."""
    return (
        ("\n" if snippet.lines else " ").join(snippet.sentences) if whole else SNIPPET_SEPARATOR.join(snippet.sentences)
    )


def place_text(section: str | None, pages: str | None) -> str:
    """ " | section: A › B | pages: 3-4", each part where the result has it."""
    return (f" | section: {section}" if section else "") + (f" | pages: {pages}" if pages else "")


def with_conversation(lines: list[str], conversation: str) -> str:
    lines.append(conversation_line(conversation))
    return "\n".join(lines)


def conversation_line(conversation: str) -> str:
    """The last line of a text answer: the handle later calls pass to share what was read."""
    return f'conversation: {conversation} (pass conversation="{conversation}" in later calls)'


def without_conversation(text: str, conversation: str | None) -> str:
    """A text answer without its conversation line (a one-shot `--call`: no later call shares it)."""
    line = conversation_line(conversation) if conversation else None
    return text.removesuffix("\n" + line) if line else text
