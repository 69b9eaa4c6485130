"""What the host model reads: tool descriptions, server instructions and system prompts.

The tool descriptions follow the A-RAG paper's tool definitions (arXiv 2602.03442, Figures 7-8),
in our own words. A profile without some tool gets instructions and a prompt that never name it.
"""

from __future__ import annotations

from collections.abc import Sequence

from arag_mcp.server.search.limits import METADATA_FIELDS

METADATA_NOTE = (
    "Results also give the file type (md, html, pdf, jsonl, ...) and, for JSON/JSONL records, their "
    f"own fields as metadata (up to {METADATA_FIELDS})."
)
SCOPE_NOTE = (
    'To search one page (all chunks of one title; a JSONL record is one chunk), pass scope {"title": "<its title>"}.'
)
ALREADY_SENT_NOTE = (
    "Text this conversation was already sent (a whole chunk, a snippet sentence) is not sent again: "
    'a result holding only such text is one line, "[rank] id | title — already sent", in its '
    "place; one with some new sentences shows only those and says how many were left out."
)
CONVERSATION_NOTE = "Pass the `conversation` handle of results back in every later call."

KEYWORD_SEARCH = """Find chunks containing exact keywords: names, titles, dates, numbers, terms, phrases.
{matching}

GOOD: ["Marie Curie", "Nobel Prize", "1911"]
BAD: ["Marie Curie", "married"] (a relation word: search the name, read its page)
BAD: ["who won the Nobel Prize in 1911"] (a sentence: use {sentence_tool})

{after}"""

SEMANTIC_SEARCH = """Find chunks by meaning: the query is compared with every sentence; a chunk ranks by its best
one. For descriptions and paraphrases{fallback}. Ask one thing at a time ("Who directed
Inception?", then "Where was Nolan born?").

{after}"""

KEYWORD_MATCHING = {
    "word": (
        "Keywords match whole words, ignoring case and accents. A page titled as a keyword comes "
        "first; then chunks rank by keyword rarity (BM25). The header counts each keyword's chunks "
        "(0 proves an absence)."
    ),
    "substring": "Keywords match as case-insensitive substrings of the text; a chunk scores the sum of "
    "occurrences x keyword length. The header gives each keyword's count of chunks (0 proves an absence).",
}
SNIPPET_AFTER = (
    "Short chunks come whole (whole chunk); longer ones as their matching sentences, exact text, "
    "marked (k of n sentences): chunk_read gives the rest. Text this conversation has is not sent "
    "again; the message names the offset to go on from."
)
FULL_TEXT_AFTER = (
    "Whole chunks are returned, so there is nothing more to read; chunks already sent in this "
    "conversation are left out and named in one line, their places going to new chunks."
)

CHUNK_READ = """Read chunks whole by id (up to 20 ids from the search tools), each with its title, section and
the ids of the previous and next chunk (read those when text is cut off at a boundary). A chunk
this conversation already read is not sent again (again: true sends it)."""

NAIVE_EMBEDDING_SEARCH = f"""Search the knowledge base by meaning and get whole chunks back.

The query is embedded and compared with one vector per chunk (cosine similarity); the top_k most
similar chunks are returned with their id, title, source, score and complete text. {METADATA_NOTE} Chunks
already sent in this conversation are left out and named in one line, their places going to new
chunks; chunks that do not fit in one answer are named, and chunk_read fetches them. Ask about one
thing at a time, and search again with new words taken from what you read. {CONVERSATION_NOTE}"""

SEMANTIC_SEARCH_QUERIES = """Search the knowledge base by meaning with 1 to 5 queries at once: each query is embedded and
compared with every sentence of the corpus (cosine similarity); chunks are ranked by their best
sentence, each query's top_k results are merged, and a chunk found by several queries appears
once, with its best score and the queries that found it.

Returns chunk ids with title, source, best score and the chunk's sentences that matched. {metadata}
Give several phrasings of one need (or its parts) in one call instead of one call each{fallback}.

{after} {conversation}"""

SEARCH = f"""Search the document collection by meaning with 1 to 5 queries at once (reformulations or parts
of one information need). Each query is compared with every sentence of the collection; each
query's best chunks (top_k per query, up to 10) are merged, and a passage found by several
queries appears once, with the queries that found it. Names, titles or exact terms given as
keywords are also looked up literally (by default as whole words, ignoring case and accents): the chunks they
match join the results, and the header says how many chunks each matches (0 proves an absence).

Each result has a ref (find and open take it), the document's title, file name and file type
(md, html, pdf, jsonl, ...) and how many lines the document has, its metadata (a JSON/JSONL record's own fields, up to {METADATA_FIELDS}), a score and a snippet:
the whole chunk when it is short, marked (whole chunk), or (whole document) when it is all of its
document; else the sentences that matched (a long one cut to its start), marked (k of n
sentences). When such a partial result looks relevant, look inside its document with find (words
or phrases) or open (a window of numbered lines). {ALREADY_SENT_NOTE} {CONVERSATION_NOTE}"""

FIND = f"""Find words or phrases inside one document, given a ref from search results.

Each pattern is matched case-insensitively as a substring of the document's lines (or, with
semantic=true, by meaning: the document's sentences nearest the pattern). For each pattern you
get how many lines match, the first matching line numbers, and up to 2 passages (the matching line
with 2 lines either side; passages that overlap or touch are one), every line after its number; a
passage already given for an earlier pattern is not repeated, and one this conversation already has
is marked, with the calls that sent it, instead of sent again. Open a
line number to read around it. Up to 10 patterns per call. {CONVERSATION_NOTE}"""

OPEN = f"""Open a window of a document's numbered lines, given a ref from search results.

Shows up to 1,800 lines (and about 10,000 tokens) from start_line (default 0), headed "Viewing
lines [a–b] of N lines", every line after its number; the header says where to continue. Lines
are stable: a number seen in find opens the same line. Runs of lines this conversation already
has are marked, with the calls that sent them, instead of sent again. {CONVERSATION_NOTE}"""

AGENTIC_INSTRUCTIONS = f"""This server searches one document collection and lets you read inside its documents.

1. Search before you answer: give search several reformulations of what you need (up to 5).
   {SCOPE_NOTE}
2. Judge the snippets. When they are not enough, explore progressively: find the words you need
   inside a promising document, then open the lines around what you found.
3. Reuse what earlier results gave you (refs, line numbers, names) before searching again.
4. Answer concisely once the evidence suffices, citing the refs (and lines) you relied on; say so
   when the collection does not contain the answer.

{CONVERSATION_NOTE}"""

AGENTIC_PROMPT = """You are a research agent answering questions from a document collection through three tools:
search (several queries at once), find (words or phrases inside one document) and open (a window
of a document's numbered lines).

- Always search before answering; phrase each need in a few different ways in one search.
- A snippet marked (k of n sentences) is partial. When one looks relevant but incomplete, use find on its document, then
  open the lines around the match, instead of searching again from scratch.
- Keep track of what you have found: reuse refs and line numbers from earlier results.
- When the evidence suffices, give a short, direct answer citing the refs and lines it rests on.
  If the collection does not contain the answer, say so."""

TOOL_GUIDES = {
    "keyword_search": "keyword_search for names, titles, numbers, exact terms",
    "semantic_search": "semantic_search for descriptions, paraphrases",
    "naive_embedding_search": "naive_embedding_search, which returns the chunks most similar to a query",
}


def keyword_search_description(tools: Sequence[str], full_text: bool, keyword_match: str = "word") -> str:
    return KEYWORD_SEARCH.format(
        matching=KEYWORD_MATCHING[keyword_match],
        sentence_tool="semantic_search" if "semantic_search" in tools else "several short keywords",
        after=FULL_TEXT_AFTER if full_text else SNIPPET_AFTER,
    )


def semantic_search_description(tools: Sequence[str], full_text: bool) -> str:
    return SEMANTIC_SEARCH.format(
        fallback=", or when keyword_search finds nothing" if "keyword_search" in tools else "",
        after=FULL_TEXT_AFTER if full_text else SNIPPET_AFTER,
    )


def semantic_search_queries_description(tools: Sequence[str]) -> str:
    return SEMANTIC_SEARCH_QUERIES.format(
        fallback="; use it when keyword_search finds nothing" if "keyword_search" in tools else "",
        after=SNIPPET_AFTER + DOCUMENT_TOOLS_AFTER if "find" in tools else SNIPPET_AFTER,
        metadata=METADATA_NOTE,
        conversation=CONVERSATION_NOTE,
    )


DOCUMENT_TOOLS_AFTER = " To read around a match in a long document, use find and open with its chunk id."


def searches(collection: str) -> str:
    """The phrase that heads every search tool's description: what this server's index holds."""
    return f"Searches {collection.rstrip('. ')}."


def instructions(tools: Sequence[str], full_text: bool, collection: str = "") -> str:
    """The server instructions for a tool set, after what the collection is: the A-RAG loop, naming
    only the tools offered."""
    loop = _loop(tools, full_text)
    return f"This server searches {collection.rstrip('. ')}.\n\n{loop}" if collection else loop


def _loop(tools: Sequence[str], full_text: bool) -> str:
    if "search" in tools:
        return AGENTIC_INSTRUCTIONS
    searches = "; ".join(TOOL_GUIDES[name] for name in tools if name in TOOL_GUIDES)
    if "chunk_read" in tools and not full_text and "naive_embedding_search" not in tools:
        read = "3. Snippets are exact text; chunk_read a chunk for its context or the sentences not shown."
    else:
        read = "3. Results carry whole chunks: read them closely before searching again."
    if "find" in tools:
        read += " Inside a long document, find words and open the numbered lines around them."
    return f"""A-RAG: you are the retrieval agent, deciding what to search, what to read and when you know enough.
1. Split a multi-hop question into single-fact sub-questions.
2. Search: {searches}. {SCOPE_NOTE}
{read}
4. Not answered? Search again with the names and terms you read.
5. Answer concisely, citing the chunk ids you relied on.
{CONVERSATION_NOTE}"""


def system_prompt(tools: Sequence[str], full_text: bool) -> str:
    """The agent system prompt for a tool set (the paper's A-RAG prompt, in our words)."""
    if "search" in tools:
        return AGENTIC_PROMPT
    if "naive_embedding_search" in tools:
        return """You are a question-answering agent with one retrieval tool over a knowledge base:
naive_embedding_search, which returns the chunks whose embedding is most similar to your query.

- Break the question into the facts you need, and search for them one at a time.
- Read the returned chunks closely; when they do not answer the sub-question, search again with
  a reformulated query or with names and terms learned from what you read.
- When you have enough evidence, give a short, direct answer and name the chunk ids it rests on.
  If the knowledge base does not contain the answer, say so."""
    searches = " and ".join(name for name in tools if name in ("keyword_search", "semantic_search"))
    guidance = []
    if "keyword_search" in tools:
        guidance.append("- Use keyword_search for specific entities and terms; prefer short, specific keywords.")
    if "semantic_search" in tools:
        guidance.append("- Use semantic_search for concepts, or when the wording is unknown.")
    if "find" in tools:
        guidance.append(
            "- semantic_search takes several phrasings of one need at once. Inside a long document,\n"
            "  use find (words, by chunk id) and open (numbered lines) instead of searching again."
        )
    if "chunk_read" in tools and not full_text:
        guidance.append(
            "- Search results are only snippets: read the relevant chunks with chunk_read before using them,\n"
            "  and read adjacent chunks when the context is incomplete. Do not read the same chunk twice."
        )
    else:
        guidance.append("- Search results carry whole chunks: read them closely before searching again.")
    lines = "\n".join(guidance)
    return f"""You are a question-answering agent with access to a knowledge base through {searches}.

Retrieve information step by step before you answer:
- Break the question into the facts you need, and find them one at a time.
{lines}
- After each step, judge whether the information suffices. If it does not, refine your search
  with what you have learned.
- When you have enough evidence, give a short, direct answer and name the chunk ids it rests on.
  If the knowledge base does not contain the answer, say so."""
