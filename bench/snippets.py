"""What search results show of their chunks on the shared sets: the figures behind the whole-chunk
thresholds of server/search/snippets.py.

For each dataset (quality.py's --quick corpora, built or reused from its cache): how many sentences
and characters its chunks have, and how long its sentences are; then, over the top 5 results of the keyword floor and of
semantic_search for each question, how many characters the matched sentences leave out of their
chunk, and, for each candidate pair of thresholds, the share of results sent whole and the
characters one call shows (matched sentences as the snippet shows them, or whole chunks). Last,
what a host that reads every gold chunk it was not sent whole would read per question (tokens),
with the thresholds in force and with matched sentences alone (whole only when every sentence of
the chunk matched, uncut).

    python bench/snippets.py                  # all five datasets
    python bench/snippets.py --datasets musique
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import index_dump  # noqa: E402
import quality  # noqa: E402
from arag_mcp.indexer import Embedder  # noqa: E402
from arag_mcp.indexer.index.keywords import keyword_search  # noqa: E402
from arag_mcp.server.search import retrieval, snippets  # noqa: E402
from common import BENCH_DATA, RESULTS, log  # noqa: E402

PERCENTILES = (10, 25, 50, 75, 90)
SENTENCE_BOUNDS = (1, 2, 3, 4, 5)
LEFT_OUT_BOUNDS = (0, 100, 150, 200, 400)
CHUNK_BOUNDS = ((3, 600), (5, 800), (8, 1000), (10, 1500))
"""Candidate short-chunk bounds (sentences, characters): a chunk within both is sent whole."""


@dataclass(frozen=True)
class Result:
    """One top-5 result of one question."""

    sentences: list[str]
    """Its chunk's sentences."""
    matched: list[str]
    cut: Callable[[str], str]
    question: int
    gold_tokens: int
    """Its chunk's tokens where the chunk is gold for the question, else 0."""


def result_chunks(dataset: quality.Dataset, embedder: Embedder) -> tuple[list, list[Result]]:
    """The index's chunks, and every top-5 result of the keyword floor and semantic_search."""
    snapshot = quality.build(dataset, False, embedder.backend)
    chunks = index_dump.all_chunks(snapshot)
    by_id = {chunk.chunk_id: chunk for chunk in chunks}
    label = quality.evidence_labels if dataset.name in quality.EVIDENCE_DATASETS else quality.passage_labels
    labels = label(dataset.questions, quality.Corpus(snapshot)).first(dataset.limit)
    questions = [q["question"] for q in labels.questions]
    results = []
    for number, (question, vector) in enumerate(zip(questions, embedder.encode_queries(questions, batch_size=64))):
        found = [(hit, snippets.leading) for hit in retrieval.semantic_search(snapshot, vector, 5)]
        found += [
            (hit, snippets.keyword_cut(hit.keywords, "word"))
            for hit in keyword_search(snapshot, quality.extract_keywords(question), 5).hits
        ]
        for hit, cut in found:
            chunk = by_id[hit.chunk.chunk_id]
            gold = labels.unit_of[chunk.chunk_id] in labels.gold[number]
            results.append(Result(chunk.sentences, hit.matched, cut, number, chunk.tokens if gold else 0))
    return chunks, results


def shown(results: list, sentence_bound: int, left_out_bound: int) -> tuple[float, float]:
    """Share of results sent whole, and characters per call (5 results), under these thresholds."""
    snippets.WHOLE_CHUNK_SENTENCES, snippets.LEFT_OUT_CHARS = sentence_bound, left_out_bound
    excerpts = [snippets.excerpt(r.sentences, r.matched, r.cut) for r in results]
    whole = float(np.mean([e.whole for e in excerpts]))
    return 100 * whole, 5 * float(np.mean([sum(map(len, e.sentences)) for e in excerpts]))


def measure(dataset: quality.Dataset, embedder: Embedder) -> dict:
    chunks, results = result_chunks(dataset, embedder)
    sentences = [len(chunk.sentence_spans) for chunk in chunks]
    chars = [len(chunk.text) for chunk in chunks]
    sentence_chars = [end - start for chunk in chunks for start, end in chunk.sentence_spans]
    left_out = [sum(map(len, r.sentences)) - sum(len(r.cut(s)) for s in r.matched) for r in results]
    matched_only = 5 * float(np.mean([sum(len(r.cut(s)) for s in r.matched) for r in results]))
    questions = 1 + max(r.question for r in results)
    reads = sum(r.gold_tokens for r in results if not snippets.excerpt(r.sentences, r.matched, r.cut).whole)
    reads_matched_only = sum(
        r.gold_tokens
        for r in results
        if not (len(r.matched) == len(r.sentences) and all(r.cut(s) == s for s in r.matched))
    )
    defaults = snippets.WHOLE_CHUNK_SENTENCES, snippets.LEFT_OUT_CHARS, snippets.WHOLE_CHUNK_CHARS
    rules = {
        f"{s} sentences, {c} chars left out": shown(results, s, c) for s in SENTENCE_BOUNDS for c in LEFT_OUT_BOUNDS
    }
    bounds = {}
    for sentence_bound, char_bound in CHUNK_BOUNDS:
        snippets.WHOLE_CHUNK_CHARS = char_bound
        whole, per_call = shown(results, sentence_bound, defaults[1])
        unread = [r for r in results if not snippets.excerpt(r.sentences, r.matched, r.cut).whole]
        bounds[f"up to {sentence_bound} sentences and {char_bound} chars"] = {
            "whole %": whole,
            "chars/call": per_call,
            "gold tokens read per question": sum(r.gold_tokens for r in unread) / questions,
        }
    snippets.WHOLE_CHUNK_SENTENCES, snippets.LEFT_OUT_CHARS, snippets.WHOLE_CHUNK_CHARS = defaults
    return {
        "chunks": len(chunks),
        "chunk sentences": dict(zip(PERCENTILES, np.percentile(sentences, PERCENTILES).tolist())),
        "chunk chars": dict(zip(PERCENTILES, np.percentile(chars, PERCENTILES).tolist())),
        "sentence chars": dict(zip(PERCENTILES, np.percentile(sentence_chars, PERCENTILES).tolist())),
        "results": len(results),
        "chars left out": dict(zip(PERCENTILES, np.percentile(left_out, PERCENTILES).tolist())),
        "matched sentences only: chars/call": matched_only,
        "whole % and chars/call": rules,
        "short-chunk bounds": bounds,
        "gold tokens read per question (keyword + semantic)": reads / questions,
        "gold tokens read per question, matched sentences only": reads_matched_only / questions,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--datasets", nargs="+", default=list(quality.DATASETS))
    parser.add_argument("--out", type=Path, default=RESULTS / "snippets.json")
    args = parser.parse_args(argv)
    embedder = Embedder().load()
    figures = {}
    for name in args.datasets:
        log(f"{name}: loading")
        figures[name] = measure(quality.load(name, args.data, True, None), embedder)
        print(name, json.dumps(figures[name], indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
