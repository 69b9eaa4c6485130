"""Does embedding each sentence under its headings cost recall? A headed corpus, with and without.

The QA sets have no headings, so this builds one from the reduced MuSiQue corpus of
`quality.py --quick` (its 40 questions' supporting passages and 400 others): passages,
shuffled, are grouped into Markdown handbooks of up to HANDBOOK_WORDS words, "# Handbook N" over
one "## <passage title>" section per passage. The passage's own title is then only in its heading,
as in a manual whose sections are named by their headings. The same texts are indexed twice:

- ``headed``:  the handbooks as .md files: each sentence is embedded under "Handbook N › <title>";
- ``flat``:    the same texts as JSONL records titled "Handbook N": no heading context.

A handbook is short enough to be one chunk in both, so the two indexes hold the same chunks and
differ only in the context their sentences were embedded with. Reported: recall@1/5/10 of the
handbooks holding each question's supporting passages, for semantic_search and keyword_search.

    python bench/headings.py
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import index_dump  # noqa: E402
from arag_mcp.indexer import (
    BuildOptions,
    Embedder,
    Index,
    open_index,
)
from arag_mcp.indexer.index.keywords import keyword_search  # noqa: E402
from arag_mcp.server.search import retrieval  # noqa: E402
from common import BENCH_DATA, RESULTS, log, read_jsonl  # noqa: E402
from quality import Labels, evaluate, extract_keywords, load, write_jsonl  # noqa: E402

HANDBOOK_WORDS = 300
"""Passages are added to a handbook while it stays under this many words (about 400 tokens): a
handbook is then one chunk whether or not chunks prefer to start at its sections."""
WORK = RESULTS / "work" / "headed"


def handbooks(records: list[dict]) -> list[tuple[str, str, list[str]]]:
    """(title, Markdown text, passage ids) of each handbook."""
    groups: list[list[dict]] = [[]]
    for record in records:
        words = sum(len(f"{r['title']} {r['text']}".split()) for r in [*groups[-1], record])
        if groups[-1] and words > HANDBOOK_WORDS:
            groups.append([])
        groups[-1].append(record)
    books = []
    for number, group in enumerate(groups, 1):
        title = f"Handbook {number}"
        sections = [f"## {record['title']}\n\n{record['text']}" for record in group]
        books.append((title, f"# {title}\n\n" + "\n\n".join(sections) + "\n", [record["id"] for record in group]))
    return books


def build_both(books: list[tuple[str, str, list[str]]]) -> dict[str, Path]:
    """The headed (.md files) and flat (JSONL) indexes of the same handbooks, built afresh."""
    shutil.rmtree(WORK, ignore_errors=True)
    folder = WORK / "handbooks"
    folder.mkdir(parents=True)
    for title, text, _ in books:
        (folder / f"{title.replace(' ', '-').lower()}.md").write_text(text, encoding="utf-8")
    flat = write_jsonl(
        WORK / "handbooks.jsonl", ({"id": title, "title": title, "text": text} for title, text, _ in books)
    )
    indexes = {}
    for name, source in (("headed", folder), ("flat", flat)):
        started = time.perf_counter()
        summary = Index(str(WORK / f"{name}-idx")).add([source], BuildOptions(progress=False))
        log(f"{name}: {summary.chunks} chunks, {summary.sentences} sentences ({time.perf_counter() - started:.0f} s)")
        indexes[name] = WORK / f"{name}-idx"
    return indexes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--out", type=Path, default=RESULTS / "headings.json")
    args = parser.parse_args(argv)
    dataset = load("musique", args.data, quick=True, max_questions=None)
    records = list(read_jsonl(dataset.corpus))
    random.Random(0).shuffle(records)  # supporting passages and others mixed in every handbook
    books = handbooks(records)
    book_of = {passage: title for title, _, passages in books for passage in passages}
    questions = dataset.questions[: dataset.limit]
    gold = [frozenset(book_of[pid] for pid in q["supporting_ids"]) for q in questions]
    embedder = Embedder().load()
    query_vectors = dict(
        zip((q["question"] for q in questions), embedder.encode_queries([q["question"] for q in questions]))
    )
    results = {}
    for name, index in build_both(books).items():
        snapshot = open_index(str(index))
        chunks = index_dump.all_chunks(snapshot)
        assert len(chunks) == len(books), "a handbook was cut into several chunks: lower HANDBOOK_WORDS"
        labels = Labels(questions, gold, {chunk.chunk_id: chunk.title for chunk in chunks})

        def semantic(question: dict, k: int) -> list[str]:
            hits = retrieval.semantic_search(snapshot, query_vectors[question["question"]], k)
            return [hit.chunk.chunk_id for hit in hits]

        def keyword(question: dict, k: int) -> list[str]:
            return [
                hit.chunk.chunk_id for hit in keyword_search(snapshot, extract_keywords(question["question"]), k).hits
            ]

        results[name] = {"semantic": evaluate(semantic, labels), "keyword": evaluate(keyword, labels)}
        log(f"{name}: semantic recall@5 {results[name]['semantic']['recall@5']:.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"questions": len(questions), "handbooks": len(books), "results": results}, indent=2)
    )
    print(f"{len(questions)} questions, {len(books)} handbooks of up to {HANDBOOK_WORDS} words")
    print(f"{'':10} {'method':9} {'recall@1':>9} {'recall@5':>9} {'recall@10':>10}")
    for name, methods in results.items():
        for method, scores in methods.items():
            print(
                f"{name:10} {method:9} {scores['recall@1']:9.1f} {scores['recall@5']:9.1f} {scores['recall@10']:10.1f}"
            )
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
