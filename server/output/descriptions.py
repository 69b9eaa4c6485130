"""What the host model reads of a profile: server instructions, system prompts, and the phrasing its
tools' descriptions share (each tool's own is in its module in server/tools/).

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

SNIPPET_AFTER = (
    "Short chunks come whole (whole chunk); longer ones as their matching sentences, exact text, "
    "marked (k of n sentences): chunk_read gives the rest. Text this conversation has is not sent "
    "again; the message names the offset to go on from."
)
FULL_TEXT_AFTER = (
    "Whole chunks are returned, so there is nothing more to read; chunks already sent in this "
    "conversation are left out and named in one line, their places going to new chunks."
)

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
