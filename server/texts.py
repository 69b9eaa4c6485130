"""What the host model reads: tool descriptions, server instructions and system prompts.

The tool descriptions follow the A-RAG paper's tool definitions (arXiv 2602.03442, Figures 7-8),
in our own words. A profile without some tool gets instructions and a prompt that never name it.
"""

from __future__ import annotations

from collections.abc import Sequence

SESSION_NOTE = (
    "Every result carries a `session` handle: pass it back as `session` in every later call of this "
    "conversation, so that chunks you already received are not sent again."
)

KEYWORD_SEARCH = """Search the knowledge base for chunks that contain the given keywords (exact text match).

Matching is case-insensitive and literal: each keyword is looked up as written, independently.
A chunk's score is the sum over keywords of (occurrences of the keyword in the chunk) x (keyword
length), so longer, more specific keywords weigh more. Returns chunk ids with title, source,
score and {shows}.

Use it for: names of people, places and organisations, titles, dates, numbers, technical terms,
exact phrases.
Keywords must be short and specific (1-3 words each); pass several alternatives as a list.
  GOOD: ["Marie Curie", "Nobel Prize", "1911"]
  BAD:  ["who won the Nobel Prize in 1911"]   (a sentence: use {sentence_tool} for that)

{after} {session}"""

SEMANTIC_SEARCH = """Search the knowledge base by meaning: the query is embedded and compared with every sentence
of the corpus (cosine similarity); chunks are ranked by their best-matching sentence.

Returns chunk ids with title, source, best score and {shows}.
Use it for descriptions, paraphrases and questions whose wording may differ from the text{fallback}.
Ask about one thing at a time: split a multi-hop question into single-fact sub-queries
("Who directed Inception?", then "Where was Christopher Nolan born?").

{after} {session}"""

SNIPPET_SHOWS = {
    "keyword_search": "a snippet made of the chunk's sentences that contain a keyword",
    "semantic_search": "the chunk's sentences that matched",
}
FULL_TEXT_SHOWS = "the chunk's complete text (what does not fit in one answer is named; search again for it)"
SNIPPET_AFTER = (
    "Snippets and matched sentences are fragments: they are not enough to answer. Call chunk_read on "
    "the promising chunk ids to read the full text before relying on them."
)
FULL_TEXT_AFTER = (
    "Whole chunks are returned, so there is nothing more to read; a chunk already sent in this "
    'conversation comes back as "This chunk has been read before" instead of its text.'
)

CHUNK_READ = f"""Read the full text of chunks by id (ids come from the search tools).

Each chunk comes with its title, source and the ids of the previous and next chunk of the same
document: read those when an answer seems cut off at a chunk boundary. A chunk already sent in
this conversation is not sent again: you get "This chunk has been read before" instead, so keep
what you read in mind. Read the most promising chunks first, a few per call (at most 20 ids).
{SESSION_NOTE}"""

NAIVE_EMBEDDING_SEARCH = f"""Search the knowledge base by meaning and get whole chunks back.

The query is embedded and compared with one vector per chunk (cosine similarity); the top_k most
similar chunks are returned with their id, title, source, score and complete text. A chunk
already sent in this conversation comes back as "This chunk has been read before" instead of its
text; chunks that do not fit in one answer are named, and chunk_read fetches them. Ask about one
thing at a time, and search again with new words taken from what you read. {SESSION_NOTE}"""

TOOL_GUIDES = {
    "keyword_search": "keyword_search for names, titles, numbers and exact terms",
    "semantic_search": "semantic_search for descriptions and paraphrases",
    "naive_embedding_search": "naive_embedding_search, which returns the chunks most similar to a query",
}


def keyword_search_description(tools: Sequence[str], full_text: bool) -> str:
    return KEYWORD_SEARCH.format(
        shows=FULL_TEXT_SHOWS if full_text else SNIPPET_SHOWS["keyword_search"],
        sentence_tool="semantic_search" if "semantic_search" in tools else "several short keywords",
        after=FULL_TEXT_AFTER if full_text else SNIPPET_AFTER,
        session=SESSION_NOTE,
    )


def semantic_search_description(tools: Sequence[str], full_text: bool) -> str:
    return SEMANTIC_SEARCH.format(
        shows=FULL_TEXT_SHOWS if full_text else SNIPPET_SHOWS["semantic_search"],
        fallback=", or when keyword_search finds nothing" if "keyword_search" in tools else "",
        after=FULL_TEXT_AFTER if full_text else SNIPPET_AFTER,
        session=SESSION_NOTE,
    )


def instructions(tools: Sequence[str], full_text: bool) -> str:
    """The server instructions for a tool set: the A-RAG loop, naming only the tools offered."""
    searches = "; ".join(TOOL_GUIDES[name] for name in tools if name in TOOL_GUIDES)
    if "chunk_read" in tools and not full_text and "naive_embedding_search" not in tools:
        read = (
            "3. Read: call chunk_read on the promising chunk ids; snippets alone are not evidence.\n"
            "   Read the previous/next chunk when context is cut off."
        )
    else:
        read = "3. Read: the search results carry whole chunks; read them closely before searching again."
    return f"""This server is a hierarchical retrieval interface to one document collection (A-RAG).
You are the retrieval agent: decide what to search, what to read, and when you know enough.

1. Decompose: split a multi-hop question into single-fact sub-questions and answer them in order.
2. Search: {searches}.
{read}
4. Evaluate: does what you read answer the sub-question? If not, search again with new terms
   taken from what you read (names, dates, places).
5. Answer concisely once the evidence suffices, citing the chunk ids you relied on.

{SESSION_NOTE}"""


def system_prompt(tools: Sequence[str], full_text: bool) -> str:
    """The agent system prompt for a tool set (the paper's A-RAG prompt, in our words)."""
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
