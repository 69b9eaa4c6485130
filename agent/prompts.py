"""Everything the agent's models read, in one place."""

from __future__ import annotations

AGENT_SYSTEM = """You answer questions from a knowledge base that you can only see through the tools you are given.
Work step by step: split the question into the facts you need and find them one at a time.
Search with short, specific terms or focused sub-questions; search results are snippets, so read
the promising chunks in full before you rely on them, and read neighbouring chunks when a passage is
cut off. After each result, decide whether you know enough; if not, search again using what you
learned. When you know the answer, reply with a short, direct answer (a name, date, number or short
phrase where possible) and the chunk ids it rests on, without calling a tool. If the knowledge base
does not hold the answer, say so."""

FINAL_ANSWER = """You have used all your tool calls. Answer the question now from what you have found, as briefly
as possible, naming the chunk ids it rests on. If you found nothing, give your best answer."""

CONTEXT_WARNING = """Note: this conversation has used {used} of its {budget} token budget. Finish the search soon: read
only what you still need, then answer."""

SUMMARIZE = """The conversation has reached its token budget of {budget} tokens. Call summarize now: write down
everything you have found that bears on the question, and list the chunk ids whose full results you
still need. Tool results of the other chunks will be removed from the conversation."""

SUMMARIZED = (
    "Findings recorded. {pruned} earlier tool results were removed; their findings are in the summary. Continue."
)

SUMMARIZE_REFUSED = (
    "Error: {problem}, so no chunk's results could be kept: {pruned} earlier tool results were removed; your "
    "findings are in the summarize call. Continue."
)

PRUNED = "[removed to save context; see the summarize findings]"

SUMMARIZE_TOOL = {
    "type": "function",
    "function": {
        "name": "summarize",
        "description": "Record the findings so far and the chunk ids whose results must stay in the conversation.",
        "parameters": {
            "type": "object",
            "properties": {
                "findings": {"type": "string", "description": "what you have found so far, with chunk ids"},
                "keep_chunk_ids": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "chunk ids whose tool results you still need",
                },
            },
            "required": ["findings", "keep_chunk_ids"],
        },
    },
}

DIRECT_SYSTEM = (
    "Answer the question from your own knowledge, as briefly as possible (a name, date, number or short phrase)."
)

NAIVE_SYSTEM = """Answer the question using the passages below. Give a short, direct answer (a name, date, number or
short phrase where possible) and the chunk ids it rests on. If the passages do not hold the answer,
say so."""

PLANNER = """You plan how to answer a question from a document collection. Break the question into the smallest
ordered list of retrieval steps: each step finds one fact, and a later step may use what an earlier
one found. A single-fact question needs one step. Reply with a JSON list of short step descriptions
and nothing else, e.g. ["Find who directed Inception", "Find where that director was born"]."""

STEP_DEFINER = """You turn one step of a plan into a concrete search query. You are given the question, the plan, the
answers of the steps done so far, and the current step. Write one self-contained search query for
the current step, with the names and facts from earlier answers filled in. Reply with the query only."""

EXTRACTOR = """You read retrieved passages for one step of a plan. Copy out only the sentences that help answer the
step, each followed by its chunk id in brackets. If nothing is relevant, reply "No relevant evidence."."""

STEP_QA = """You answer one step of a plan from the evidence given. Answer in one short sentence, naming the chunk
ids you used. If the evidence does not answer it, say what is missing."""

FINAL_QA = """You give the final answer to a question from the answers of the plan's steps. Reply with the answer
alone, as briefly as possible (a name, date, number or short phrase where possible), followed by the
chunk ids it rests on. If the steps did not find it, give your best answer."""

JUDGE = """You grade an answer to a question against the gold answer. The answer is correct if it contains the
key information of the gold answer, is factually accurate about it, and does not contradict it;
extra detail is fine. Reply with exactly one word: correct or incorrect.

Question: {question}
Gold answer: {gold}
Answer: {answer}"""
