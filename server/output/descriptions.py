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
    'To search inside one page, pass scope {"title": "<its title>"}; scope also takes a document ref, '
    "a folder, a file type or a metadata value."
)
ALREADY_SENT_NOTE = (
    "Text this conversation was already sent (a whole chunk, a snippet sentence) is not sent again: "
    'a result holding only such text is one line, "[rank] id | title — already sent", in its '
    "place; one with some new sentences shows only those and says how many were left out."
)
NEW_TEXT_NOTE = (
    "Text this conversation was already sent is not sent again: every place of top_k goes to a result "
    "with new text, and the chunks you already have that ranked there are named in one line "
    "(chunk_read with again: true sends one again); a result with some new sentences shows only those "
    "and says how many were left out. To see the results after these, repeat the search with the "
    "offset the message names."
)
CONVERSATION_NOTE = (
    "Every result carries a `conversation` handle: pass it back as `conversation` in every later call "
    "of this conversation, so that chunks you already received are not sent again."
)

KEYWORD_SEARCH = """Search the knowledge base for chunks that contain the given keywords.

{matching} {scoring} {results} Returns chunk ids with title,
source, section and pages (where the document has headings or pages), score, the keywords each
chunk matched, and {shows}. {metadata}

Use it for: names of people, places and organisations, titles, dates, numbers, technical terms,
exact phrases. Keywords are names and specific terms (a full name or title may be up to 16 words);
pass several alternatives as a list. Relation words ("married", "father", "published") match
hundreds of chunks: leave them out, and read the page of the name instead.
  GOOD: ["Marie Curie", "Nobel Prize", "1911"]
  BAD:  ["Marie Curie", "married"]   (a relation word: search the name, then read its page)
  BAD:  ["who won the Nobel Prize in 1911"]   (a sentence: use {sentence_tool} for that)
To stay inside one page, pass scope {{"title": "Marie Curie"}}.

{after} {conversation}"""

SEMANTIC_SEARCH = """Search the knowledge base by meaning: the query is embedded and compared with every sentence
of the corpus (cosine similarity); chunks are ranked by their best-matching sentence.

Returns chunk ids with title, source, section and pages (where the document has headings or
pages), best score and {shows}. {metadata}
Use it for descriptions, paraphrases and questions whose wording may differ from the text{fallback}.
Ask about one thing at a time: split a multi-hop question into single-fact sub-queries
("Who directed Inception?", then "Where was Christopher Nolan born?").

{after} {conversation}"""

KEYWORD_MATCHING = {
    "word": (
        'A keyword matches whole words, ignoring case, accents and width: "Einstein" finds '
        '"EINSTEIN\'s", not "Einsteinium"; "Benitez" finds "Benìtez"; "&" and "and" are the same. '
        'A one-word keyword with punctuation ("--table", "C++", "pg_hba.conf", "T-ALL") matches only where '
        'the text has that punctuation, and one in capitals ("ALL", "IT") only the acronym, not the common '
        "word; where no chunk has it so, its words match. A chunk's title counts as part of it, and the "
        "page a keyword names (titled as the keyword, or "
        '"keyword (qualifier)") ranks above every page that only mentions it, whatever its length.'
    ),
    "substring": "Matching is case-insensitive and literal: each keyword is looked up as written, independently, "
    "also inside longer words; titles are not searched.",
}
KEYWORD_SCORING = {
    "word": (
        "A chunk's score weighs each keyword by its rarity (BM25): a keyword found in few chunks counts "
        "more than one found in many, repeats add less and less, and long chunks are discounted (after "
        "the pages the keywords name); scores are shown to 2 decimals."
    ),
    "substring": "A chunk's score is the sum over keywords of (occurrences of the keyword in the chunk) x "
    "(keyword length), so longer, more specific keywords weigh more.",
}
KEYWORD_RESULTS = {
    "word": (
        "When top_k is at least the number of keywords, the best chunk of every keyword that matches "
        "(its page where it has one) is among the results (a frequent keyword cannot crowd out a rare "
        "one); the other places go by score. The header says how many chunks each keyword matches (0 proves an absence)."
    ),
    "substring": "The header says how many chunks each keyword matches (0 proves an absence).",
}
SNIPPET_SHOWS = {
    "keyword_search": "the whole chunk when it is short, else a snippet made of its sentences that contain a keyword "
    "(a long one cut around it, a date or number never cut) and how many of its sentences that is",
    "semantic_search": "the whole chunk's sentences when it is short, else its sentences that matched (a long one cut "
    "to its start) and how many of its sentences that is",
}
FULL_TEXT_SHOWS = "the chunk's complete text (what does not fit in one answer is named; search again for it)"
SNIPPET_AFTER = (
    "A sentence that opens with a pronoun comes with the sentence before. A result marked "
    "(k of n sentences) is a fragment: call chunk_read on the promising chunk ids to read the full "
    "text before relying on it. A result marked (whole chunk) already shows the complete chunk: do "
    f"not read it. {NEW_TEXT_NOTE}"
)
FULL_TEXT_AFTER = (
    "Whole chunks are returned, so there is nothing more to read; chunks already sent in this "
    "conversation are left out and named in one line, their places going to new chunks."
)

CHUNK_READ = f"""Read the full text of chunks by id (ids come from the search tools).

Each chunk comes with its title, source, section and pages (where the document has headings or
pages) and the ids of the previous and next chunk of the same document: read those when an answer seems cut off at a chunk boundary. A chunk already sent in
this conversation is not sent again: you get "This chunk has been read before" instead, so keep
what you read in mind (pass again: true if it is no longer in your context). Read the most
promising chunks first, a few per call (at most 20 ids).
{CONVERSATION_NOTE}"""

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
    "keyword_search": "keyword_search for names, titles, numbers and exact terms",
    "semantic_search": "semantic_search for descriptions and paraphrases",
    "naive_embedding_search": "naive_embedding_search, which returns the chunks most similar to a query",
}


def keyword_search_description(tools: Sequence[str], full_text: bool, keyword_match: str = "word") -> str:
    return KEYWORD_SEARCH.format(
        matching=KEYWORD_MATCHING[keyword_match],
        scoring=KEYWORD_SCORING[keyword_match],
        results=KEYWORD_RESULTS[keyword_match],
        shows=FULL_TEXT_SHOWS if full_text else SNIPPET_SHOWS["keyword_search"],
        sentence_tool="semantic_search" if "semantic_search" in tools else "several short keywords",
        after=FULL_TEXT_AFTER if full_text else SNIPPET_AFTER,
        metadata=METADATA_NOTE,
        conversation=CONVERSATION_NOTE,
    )


def semantic_search_description(tools: Sequence[str], full_text: bool) -> str:
    return SEMANTIC_SEARCH.format(
        shows=FULL_TEXT_SHOWS if full_text else SNIPPET_SHOWS["semantic_search"],
        fallback=", or when keyword_search finds nothing" if "keyword_search" in tools else "",
        after=FULL_TEXT_AFTER if full_text else SNIPPET_AFTER,
        metadata=METADATA_NOTE,
        conversation=CONVERSATION_NOTE,
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
        read = (
            "3. Read: call chunk_read on the promising chunk ids; snippets alone are not evidence.\n"
            "   Read the previous/next chunk when context is cut off."
        )
    else:
        read = "3. Read: the search results carry whole chunks; read them closely before searching again."
    if "find" in tools:
        read += "\n   Inside a long document, find words by chunk id and open the numbered lines around them."
    return f"""This server is a hierarchical retrieval interface to one document collection (A-RAG).
You are the retrieval agent: decide what to search, what to read, and when you know enough.

1. Decompose: split a multi-hop question into single-fact sub-questions and answer them in order.
2. Search: {searches}.
   {SCOPE_NOTE}
{read}
4. Evaluate: does what you read answer the sub-question? If not, search again with new terms
   taken from what you read (names, dates, places).
5. Answer concisely once the evidence suffices, citing the chunk ids you relied on.

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
