"""Retrieval quality of the A-RAG tools on multi-hop QA corpora, against two baselines, in one run.

For each dataset an index is built with the default model; then every question is asked once
(single shot) of:

- ``semantic_search``  ours, exactly as the MCP tool runs it (arag_mcp.server.retrieval);
- ``keyword_search``   ours, fed by a fixed keyword extractor over the question (a floor for
  what an agent does with the tool);
- ``naive``            one vector per chunk (the chunk text), top-k chunks by cosine;
- ``reference``        the paper's reference semantics: sentences split on . ! ? and newlines,
  fragments of 10 characters or fewer dropped, each embedded alone; chunks ranked by their best
  sentence (NumPy brute force).

Reported per dataset: recall of the gold supporting passages within the top 1/5/10 chunks, the
share of questions with all supports in the top 5, and the tokens one call returns at top_k=5.
A sample of our results is checked against brute-force definitions of both tools.

    python bench/quality.py            # musique + 2wikimultihopqa, ~15 min on 2 cores
    python bench/quality.py --quick    # 40 questions per dataset on a reduced corpus, < 3 min
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import regex

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer.build import BuildOptions, build_index  # noqa: E402
from arag_mcp.indexer.embedding import BACKENDS, DEFAULT_BACKEND, Embedder  # noqa: E402
from arag_mcp.indexer.manifest import FORMAT_VERSION, read_manifest  # noqa: E402
from arag_mcp.indexer.store import IndexSnapshot, open_index  # noqa: E402
from arag_mcp.server import retrieval  # noqa: E402
from common import BENCH_DATA, RESULTS, log, read_jsonl  # noqa: E402

DATASETS = ("musique", "2wikimultihopqa")
KS = (1, 5, 10)
CHECK_SAMPLE = 20
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were did does do the a an in of on at "
    "for to and or by from with as that this".split()
)


@dataclass
class Dataset:
    name: str
    corpus: Path
    questions: list[dict]


Ranker = Callable[[dict, int], list[str]]
"""question -> top-k document ids (one chunk per passage, so chunk = passage)."""


def load(name: str, data: Path, quick: bool, max_questions: int | None) -> Dataset:
    """A dataset; with --quick, 40 questions over their passages plus 400 distractors."""
    questions = [q for q in read_jsonl(data / name / "questions.jsonl") if q["supporting_ids"]]
    corpus = data / name / "corpus.jsonl"
    if quick:
        questions = questions[:40]
        wanted = {sid for q in questions for sid in q["supporting_ids"]}
        records = list(read_jsonl(corpus))
        distractors = random.Random(0).sample([r for r in records if r["id"] not in wanted], 400)
        subset = [r for r in records if r["id"] in wanted] + distractors
        corpus = RESULTS / "work" / f"{name}-quick.jsonl"
        corpus.parent.mkdir(parents=True, exist_ok=True)
        corpus.write_text("".join(json.dumps(r) + "\n" for r in subset))
    if max_questions:
        questions = questions[:max_questions]
    return Dataset(name, corpus, questions)


def build(dataset: Dataset, rebuild: bool, backend: str) -> IndexSnapshot:
    uri = RESULTS / "work" / f"{dataset.corpus.stem}-{dataset.name}-{backend}-idx"
    started = time.perf_counter()
    cached = read_manifest(str(uri))
    rebuild = rebuild or bool(cached and cached.get("format_version") != FORMAT_VERSION)
    summary = build_index([dataset.corpus], str(uri), BuildOptions(progress=False, rebuild=rebuild, backend=backend))
    log(
        f"{dataset.name}: index {summary.chunks} chunks, {summary.sentences} sentences "
        f"({summary.embedded_sentences} embedded, {time.perf_counter() - started:.0f} s)"
    )
    return open_index(str(uri))


class Corpus:
    """The indexed chunks, held in memory for the baselines and the brute-force checks."""

    def __init__(self, snapshot: IndexSnapshot) -> None:
        chunks = snapshot.chunks.search().select(["chunk_id", "doc_id", "title", "text"]).limit(None).to_arrow().to_pylist()
        self.chunk_ids = [c["chunk_id"] for c in chunks]
        self.doc_of = {c["chunk_id"]: c["doc_id"] for c in chunks}
        self.texts = [c["text"] for c in chunks]
        self.titles = [c["title"] for c in chunks]


def reference_sentences(text: str) -> list[str]:
    """The paper's reference splitter: . ! ? and newlines; fragments of <= 10 characters dropped."""
    return [s.strip() for s in regex.split(r"[.!?\n]", text) if len(s.strip()) > 10]


def rank_by_best(scores: np.ndarray, owners: np.ndarray, k: int) -> list[int]:
    """Indexes of the k owners with the highest best score (ties by owner index)."""
    best = np.full(owners.max() + 1, -np.inf, dtype=np.float32)
    np.maximum.at(best, owners, scores)
    order = np.lexsort((np.arange(best.size), -best))
    return [int(i) for i in order[:k] if np.isfinite(best[i])]


class Methods:
    """The four rankers over one dataset, sharing the question embeddings."""

    def __init__(self, snapshot: IndexSnapshot, corpus: Corpus, embedder: Embedder, questions: list[dict]) -> None:
        self.snapshot, self.corpus, self.embedder = snapshot, corpus, embedder
        texts = [q["question"] for q in questions]
        self.query_vectors = dict(zip(texts, embedder.encode_queries(texts, batch_size=64)))
        log("  embedding chunks (naive baseline)")
        self.chunk_vectors = embedder.encode_documents(corpus.texts, batch_size=16)
        pieces = [(i, s) for i, text in enumerate(corpus.texts) for s in reference_sentences(text)]
        log(f"  embedding {len(pieces)} reference sentences")
        self.reference_owner = np.array([i for i, _ in pieces])
        self.reference_text = [s for _, s in pieces]
        self.reference_vectors = embedder.encode_documents(self.reference_text, batch_size=16)

    def semantic(self, question: dict, k: int) -> list[str]:
        hits = retrieval.semantic_search(self.snapshot, self.query_vectors[question["question"]], k)
        return [hit.chunk_id for hit in hits]

    def keyword(self, question: dict, k: int) -> list[str]:
        return [
            hit.chunk_id for hit in retrieval.keyword_search(self.snapshot, extract_keywords(question["question"]), k)
        ]

    def naive(self, question: dict, k: int) -> list[str]:
        scores = self.chunk_vectors @ self.query_vectors[question["question"]]
        order = np.lexsort((np.arange(scores.size), -scores))[:k]
        return [self.corpus.chunk_ids[i] for i in order]

    def reference(self, question: dict, k: int) -> list[str]:
        scores = self.reference_vectors @ self.query_vectors[question["question"]]
        return [self.corpus.chunk_ids[i] for i in rank_by_best(scores, self.reference_owner, k)]

    def returned_text(self, method: str, question: dict) -> str:
        """What one call at top_k=5 shows the host."""
        if method == "semantic":
            hits = retrieval.semantic_search(self.snapshot, self.query_vectors[question["question"]], 5)
            return " ".join(s for hit in hits for s in hit.sentences)
        if method == "keyword":
            hits = retrieval.keyword_search(self.snapshot, extract_keywords(question["question"]), 5)
            return " ".join(s for hit in hits for s in hit.snippet)
        if method == "naive":
            index = {cid: i for i, cid in enumerate(self.corpus.chunk_ids)}
            return " ".join(self.corpus.texts[index[cid]] for cid in self.naive(question, 5))
        scores = self.reference_vectors @ self.query_vectors[question["question"]]
        top = set(rank_by_best(scores, self.reference_owner, 5))
        return " ".join(t for t, o, s in zip(self.reference_text, self.reference_owner, scores) if o in top and s > 0.3)


def extract_keywords(question: str) -> list[str]:
    """Deterministic keywords: quoted strings, capitalised spans and numbers of the question."""
    quoted = regex.findall(r'"([^"]+)"', question)
    spans = regex.findall(
        r"\p{Lu}[\p{L}'’.-]*(?:\s+(?:(?:of|the|de|du|von|van|and|la|le)\s+)*\p{Lu}[\p{L}'’.-]*)*", question
    )
    spans = [" ".join(w for w in s.split() if w.lower() not in QUESTION_WORDS or s.split().index(w) > 0) for s in spans]
    numbers = regex.findall(r"\b\d[\d,.]*\b", question)
    keywords = [k.strip(" ?.,'’") for k in quoted + spans + numbers]
    keywords = [k for k in dict.fromkeys(keywords) if k and k.lower() not in QUESTION_WORDS]
    if not keywords:
        words = [w for w in regex.findall(r"\p{L}+", question) if w.lower() not in QUESTION_WORDS]
        keywords = sorted(words, key=len, reverse=True)[:3]
    return keywords


def evaluate(rank: Ranker, questions: list[dict], doc_of: dict[str, str]) -> dict[str, float]:
    recalls = {k: [] for k in KS}
    complete = []
    for question in questions:
        gold = set(question["supporting_ids"])
        ranked = [doc_of[cid] for cid in rank(question, max(KS))]
        for k in KS:
            recalls[k].append(len(gold & set(ranked[:k])) / len(gold))
        complete.append(gold <= set(ranked[:5]))
    result = {f"recall@{k}": 100 * float(np.mean(v)) for k, v in recalls.items()}
    result["all@5"] = 100 * float(np.mean(complete))
    return result


def check_against_brute_force(methods: Methods, questions: list[dict]) -> dict[str, float]:
    """Share of sampled questions where the tools equal their definitions (ids and scores)."""
    sentences = methods.snapshot.sentences.to_arrow()
    vectors = np.stack(sentences["vector"].to_numpy(zero_copy_only=False))
    index = {cid: i for i, cid in enumerate(methods.corpus.chunk_ids)}
    owners = np.array([index[c] for c in sentences["chunk_id"].to_pylist()])
    sample = questions[:CHECK_SAMPLE]
    semantic_ok = keyword_ok = 0
    for question in sample:
        query = methods.query_vectors[question["question"]]
        scores = vectors @ query
        best = np.full(len(index), -np.inf, dtype=np.float32)
        np.maximum.at(best, owners, scores)
        expected = rank_by_best(scores, owners, 10)
        hits = retrieval.semantic_search(methods.snapshot, query, 10)
        semantic_ok += [index[h.chunk_id] for h in hits] == expected and all(
            abs(h.score - best[index[h.chunk_id]]) < 1e-5 for h in hits
        )
        terms = list(dict.fromkeys(k.lower() for k in extract_keywords(question["question"])))
        counts = [
            (sum(t.lower().count(k) * len(k) for k in terms), cid)
            for cid, t in zip(methods.corpus.chunk_ids, methods.corpus.texts)
        ]
        expected_kw = sorted(((-s, c) for s, c in counts if s), key=lambda x: x)[:10]
        got = [(-h.score, h.chunk_id) for h in retrieval.keyword_search(methods.snapshot, terms, 10)]
        keyword_ok += got == expected_kw
    return {"semantic_search": 100 * semantic_ok / len(sample), "keyword_search": 100 * keyword_ok / len(sample)}


def run_dataset(dataset: Dataset, embedder: Embedder, rebuild: bool) -> dict:
    snapshot = build(dataset, rebuild, embedder.backend)
    corpus = Corpus(snapshot)
    methods = Methods(snapshot, corpus, embedder, dataset.questions)
    results: dict = {"questions": len(dataset.questions), "chunks": len(corpus.chunk_ids)}
    for name in ("semantic", "keyword", "naive", "reference"):
        started = time.perf_counter()
        results[name] = evaluate(getattr(methods, name), dataset.questions, corpus.doc_of)
        texts = [methods.returned_text(name, q) for q in dataset.questions]
        results[name]["tokens/call"] = float(np.mean(embedder.count_tokens(texts)))
        log(f"  {name}: recall@5 {results[name]['recall@5']:.1f} ({time.perf_counter() - started:.0f} s)")
    results["brute_force_agreement"] = check_against_brute_force(methods, dataset.questions)
    return results


def print_table(results: dict[str, dict]) -> None:
    names = list(results)
    rows = [
        (method, metric)
        for method in ("semantic", "keyword", "naive", "reference")
        for metric in ("recall@1", "recall@5", "recall@10", "all@5", "tokens/call")
    ]
    print(f"{'method':<11}{'metric':<13}" + "".join(f"{n:>17}" for n in [*names, "average"]))
    for method, metric in rows:
        values = [results[n][method][metric] for n in names]
        cells = "".join(f"{v:>17.1f}" for v in [*values, float(np.mean(values))])
        print(f"{method:<11}{metric:<13}{cells}")
    for name in names:
        gap = results[name]["semantic"]["recall@5"] - results[name]["reference"]["recall@5"]
        naive = results[name]["semantic"]["recall@5"] - results[name]["naive"]["recall@5"]
        agreement = results[name]["brute_force_agreement"]
        print(
            f"{name}: semantic_search recall@5 vs reference {gap:+.1f}, vs naive {naive:+.1f}; "
            f"brute-force agreement semantic {agreement['semantic_search']:.0f}%, keyword {agreement['keyword_search']:.0f}%"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--max-questions", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="40 questions per dataset on a reduced corpus (< 3 min)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild cached indexes")
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND, help="embedding backend (all methods)")
    parser.add_argument("--out", type=Path, default=RESULTS / "quality.json")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"no benchmark data at {args.data}; pass --data", file=sys.stderr)
        return 2
    embedder = Embedder(backend=args.backend).load()
    results = {}
    for name in args.datasets:
        log(f"{name}: loading")
        results[name] = run_dataset(load(name, args.data, args.quick, args.max_questions), embedder, args.rebuild)
    print_table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"quick": args.quick, "backend": embedder.backend, "results": results}, indent=2))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
