"""Retrieval quality of the A-RAG tools on QA and retrieval corpora, against two baselines, in one run.

For each dataset an index is built with the default model; then every question is asked once
(single shot) of:

- ``semantic_search``  ours, exactly as the MCP tool runs it (arag_mcp.server.search.retrieval);
- ``keyword_search``   ours (whole words, the default), fed by a fixed keyword extractor over the
  question (a floor for what an agent does with the tool);
- ``naive``            Naive RAG: one vector per chunk (the index's chunk vectors, which the
  ``naive`` profile's tool searches), top-k chunks by cosine; with ``--compare-chunk-vectors``
  also ``naive_text``, the chunk's own text embedded (the model reads its first 256 tokens);
- ``reference``        the paper's reference semantics: sentences split on . ! ? and newlines,
  fragments of 10 characters or fewer dropped, each embedded alone; chunks ranked by their best
  sentence (NumPy brute force).

What a question needs found depends on its corpus's labels:

- passage corpora (musique, 2wikimultihopqa, scifact): the gold ids are the supporting passages or
  abstracts; a returned chunk stands for its document, so a document counts as found when any of
  the top-k chunks belongs to it;
- evidence corpora (graphrag-medical, graphrag-novel): long documents cut into ~1,000-token chunks,
  labelled with paraphrased evidence sentences; each evidence sentence is mapped to the chunk that
  best covers its content words (``evidence_gold``), and the gold ids are those chunks.

Reported per dataset: recall of the gold ids within the top 1/5/10 chunks, the share of questions
with all of them in the top 5, and the tokens one call returns at top_k=5 (`tokens/call`: the
matched text; for our two searches also `text tokens/call`: the tool's whole text answer, header,
ids and titles included). A sample of our results is checked against brute-force definitions of
both tools (keyword_search in both match modes).

    python bench/quality.py            # all five datasets
    python bench/quality.py --quick    # 40 questions per dataset on a reduced corpus, < 3 min
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import regex
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

import index_dump  # noqa: E402
from arag_mcp.indexer import (  # noqa: E402
    BACKENDS,
    DEFAULT_BACKEND,
    BuildOptions,
    Embedder,
    Index,
    IndexSnapshot,
    IndexStoreError,
    open_index,
)
from arag_mcp.indexer.build_model import check_compatible  # noqa: E402
from arag_mcp.indexer.index.keywords import keyword_search  # noqa: E402
from arag_mcp.indexer.index.keywords.definition import WordCorpus, keyword_ranking  # noqa: E402
from arag_mcp.indexer.index.manifest import committed_manifest  # noqa: E402
from arag_mcp.server.output import chunk_results as rendered  # noqa: E402
from arag_mcp.server.search import retrieval  # noqa: E402
from arag_mcp.server.search.snippets import Excerpt, excerpt, keyword_cut, leading, snippet  # noqa: E402
from arag_mcp.server.tools.keyword_search import keyword_output, keyword_text  # noqa: E402
from brute_force import SentenceMatrix, vector_ranking  # noqa: E402
from common import BENCH_DATA, RESULTS, log, read_jsonl  # noqa: E402

METHODS = ("semantic", "keyword", "naive", "reference")
DATASETS = ("musique", "2wikimultihopqa", "scifact", "graphrag-medical", "graphrag-novel")
EVIDENCE_DATASETS = frozenset({"graphrag-medical", "graphrag-novel"})
KS = (1, 5, 10)
CHECK_SAMPLE = 20
HANDLE = "c-AAAAAAAAAAAA"
"""A handle of the issued length, for the text a tool answers with."""
QUICK_QUESTIONS = 40
QUICK_DISTRACTORS = {"musique": 400, "2wikimultihopqa": 400, "scifact": 60}  # an abstract: ~3x a QA passage
QUICK_DOCUMENT_CHARS = 60_000
EVIDENCE_COVERAGE = 0.6
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were did does do the a an in of on at "
    "for to and or by from with as that this".split()
)
STOP_WORDS = QUESTION_WORDS | frozenset(
    "be been being it its these those not no has have had he she they them his her their we you i "
    "but if into than then there also".split()
)


@dataclass
class Dataset:
    name: str
    corpus: Path
    questions: list[dict]
    limit: int | None = None  # evaluate only the first `limit` questions that have gold ids


@dataclass
class Labels:
    """What each question needs found: gold ids in the id space `unit_of` maps returned chunks to."""

    questions: list[dict]  # the questions with at least one gold id
    gold: list[frozenset[str]]
    unit_of: dict[str, str]  # chunk id -> its document (passage corpora) or itself (evidence corpora)
    counts: dict[str, int] = field(default_factory=dict)  # how evidence labels were made

    def first(self, limit: int | None) -> Labels:
        """The first `limit` questions (all of them when None); the counts still describe all."""
        return Labels(self.questions[:limit], self.gold[:limit], self.unit_of, self.counts)


Ranker = Callable[[dict, int], list[str]]
"""question -> ids of the top-k chunks."""


def load(name: str, data: Path, quick: bool, max_questions: int | None) -> Dataset:
    """A dataset's questions and corpus file; with --quick, 40 questions on a reduced corpus."""
    folder = data / name
    questions, corpus = read_beir(folder) if (folder / "qrels").is_dir() else read_common(folder)
    if quick:
        if name in EVIDENCE_DATASETS:
            questions, records = quick_documents(questions, corpus)
        else:
            questions = questions[:QUICK_QUESTIONS]
            records = quick_passages(questions, corpus, QUICK_DISTRACTORS[name])
        corpus = write_jsonl(RESULTS / "work" / f"{name}-quick.jsonl", records)
    caps = [n for n in (max_questions, QUICK_QUESTIONS if quick else None) if n]
    return Dataset(name, corpus, questions, min(caps, default=None))


def read_common(folder: Path) -> tuple[list[dict], Path]:
    """A folder in the common layout: its questions that have supporting ids, and its corpus file."""
    return [q for q in read_jsonl(folder / "questions.jsonl") if q["supporting_ids"]], folder / "corpus.jsonl"


def read_beir(folder: Path) -> tuple[list[dict], Path]:
    """A BEIR folder: the test queries with a positive qrel as questions, the corpus converted to our records."""
    relevant: dict[str, list[str]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if int(row["score"]) > 0:
                relevant.setdefault(row["query-id"], []).append(row["corpus-id"])
    queries = {q["_id"]: q["text"] for q in read_jsonl(folder / "queries.jsonl")}
    questions = [{"id": qid, "question": queries[qid], "supporting_ids": ids} for qid, ids in relevant.items()]
    records = ({"id": r["_id"], "title": r["title"], "text": r["text"]} for r in read_jsonl(folder / "corpus.jsonl"))
    return questions, write_jsonl(RESULTS / "work" / f"{folder.name}.jsonl", records)


def quick_passages(questions: list[dict], corpus: Path, distractors: int) -> list[dict]:
    """The questions' supporting passages plus `distractors` random others."""
    wanted = {sid for q in questions for sid in q["supporting_ids"]}
    records = list(read_jsonl(corpus))
    others = random.Random(0).sample([r for r in records if r["id"] not in wanted], distractors)
    return [r for r in records if r["id"] in wanted] + others


def quick_documents(questions: list[dict], corpus: Path) -> tuple[list[dict], list[dict]]:
    """All questions about the documents the first 40 name, and those documents cut to 60,000 characters.

    Evidence from after the cut is mostly dropped (or mapped loosely); the run evaluates the first
    40 questions left with gold chunks (Dataset.limit). A smoke test, not comparable with a full run.
    """
    wanted = {sid for q in questions[:QUICK_QUESTIONS] for sid in q["supporting_ids"]}
    records = [r | {"text": r["text"][:QUICK_DOCUMENT_CHARS]} for r in read_jsonl(corpus) if r["id"] in wanted]
    return [q for q in questions if wanted.issuperset(q["supporting_ids"])], records


def write_jsonl(path: Path, records: Iterable[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def build(dataset: Dataset, rebuild: bool, backend: str) -> IndexSnapshot:
    uri = RESULTS / "work" / f"{dataset.corpus.stem}-{dataset.name}-{backend}-idx"
    started = time.perf_counter()
    options = BuildOptions(progress=False, backend=backend)
    try:
        check_compatible(committed_manifest(str(uri)), options.for_index(None))
    except IndexStoreError:  # built by older code: start over
        rebuild = True
    summary = Index(str(uri)).add([dataset.corpus], replace(options, rebuild=rebuild))
    log(
        f"{dataset.name}: index {summary.chunks} chunks, {summary.sentences} sentences "
        f"({summary.embedded_sentences} embedded, {time.perf_counter() - started:.0f} s)"
    )
    return open_index(str(uri))


class Corpus:
    """The indexed chunks, held in memory for the baselines and the brute-force checks."""

    def __init__(self, snapshot: IndexSnapshot) -> None:
        chunks = index_dump.all_chunks(snapshot)
        self.chunk_ids = [c.chunk_id for c in chunks]
        self.doc_of = {c.chunk_id: c.doc_id for c in chunks}
        self.texts = [c.text for c in chunks]
        self.titles = [c.title for c in chunks]
        self.lengths = [c.tokens for c in chunks]


def passage_labels(questions: list[dict], corpus: Corpus) -> Labels:
    """Gold ids = the supporting passages (documents); a returned chunk stands for its document."""
    return Labels(questions, [frozenset(q["supporting_ids"]) for q in questions], corpus.doc_of)


def evidence_labels(questions: list[dict], corpus: Corpus) -> Labels:
    """Gold ids = the chunks the evidence sentences map to; questions left with none are skipped."""
    gold, counts = evidence_gold(questions, corpus)
    kept = [i for i, ids in enumerate(gold) if ids]
    counts["questions_skipped"] = len(questions) - len(kept)
    identity = {cid: cid for cid in corpus.chunk_ids}
    return Labels([questions[i] for i in kept], [gold[i] for i in kept], identity, counts)


def content_words(text: str) -> set[str]:
    """The distinct lower-cased letter/digit words of `text`, stop words removed."""
    return set(regex.findall(r"[\p{L}\p{N}]+", text.lower())) - STOP_WORDS


def incidence(word_sets: Sequence[set[str]], vocabulary: dict[str, int]) -> sparse.csr_matrix:
    """A 0/1 matrix: a row per set, a column per vocabulary word (words outside it are left out)."""
    columns = [[vocabulary[w] for w in words if w in vocabulary] for words in word_sets]
    rows = np.repeat(np.arange(len(columns)), [len(c) for c in columns])
    flat = np.fromiter((c for cs in columns for c in cs), dtype=np.int64, count=len(rows))
    return sparse.csr_matrix((np.ones(len(rows)), (rows, flat)), shape=(len(columns), len(vocabulary)))


def evidence_gold(
    questions: list[dict], corpus: Corpus, threshold: float = EVIDENCE_COVERAGE
) -> tuple[list[frozenset[str]], dict[str, int]]:
    """Map every evidence sentence to the chunk of its question's documents that best covers it.

    A chunk's coverage of a sentence is the share of the sentence's content words (`content_words`)
    that occur in the chunk; ties go to the higher IDF-weighted overlap (IDF over the chunks). The
    label is kept when the best coverage is at least `threshold` and a single chunk is best: when
    several chunks hold exactly the same words of the sentence, nothing says which one it
    paraphrases. Returns each question's set of gold chunk ids, and counts of evidence sentences
    kept, dropped for low coverage and dropped as ambiguous.
    """
    owner = np.array([i for i, q in enumerate(questions) for _ in q["evidence"]], dtype=np.int64)
    evidence = [content_words(sentence) for q in questions for sentence in q["evidence"]]
    vocabulary = {word: i for i, word in enumerate(sorted(set().union(*evidence)))}
    sentences = incidence(evidence, vocabulary)
    chunks = incidence([content_words(text) for text in corpus.texts], vocabulary)
    idf = np.log((chunks.shape[0] + 1) / (np.asarray(chunks.sum(axis=0)).ravel() + 1))
    shared = (sentences @ chunks.T).toarray()
    weighted = (sentences @ sparse.diags(idf) @ chunks.T).toarray()
    sizes = np.maximum(np.asarray(sentences.sum(axis=1)), 1)
    coverage = np.where(supporting_chunks(questions, corpus)[owner], shared / sizes, -1.0)
    best = coverage.max(axis=1)
    weight = np.where(coverage == best[:, None], weighted, -np.inf)
    winners = weight == weight.max(axis=1)[:, None]
    kept = (best >= threshold) & (winners.sum(axis=1) == 1)
    gold: list[set[str]] = [set() for _ in questions]
    for question, chunk in zip(owner[kept], winners.argmax(axis=1)[kept]):
        gold[question].add(corpus.chunk_ids[chunk])
    counts = {
        "evidence": len(evidence),
        "kept": int(kept.sum()),
        "low_coverage": int((best < threshold).sum()),
        "ambiguous": int(((best >= threshold) & ~kept).sum()),
    }
    return [frozenset(ids) for ids in gold], counts


def supporting_chunks(questions: list[dict], corpus: Corpus) -> np.ndarray:
    """questions x chunks: True where the chunk belongs to one of the question's supporting documents."""
    documents = {doc: i for i, doc in enumerate(dict.fromkeys(corpus.doc_of.values()))}
    chunk_document = np.array([documents[corpus.doc_of[cid]] for cid in corpus.chunk_ids], dtype=np.int64)
    supported = np.zeros((len(questions), len(documents)), dtype=bool)
    for row, question in enumerate(questions):
        supported[row, [documents[d] for d in question["supporting_ids"] if d in documents]] = True
    return supported[:, chunk_document]


def reference_sentences(text: str) -> list[str]:
    """The paper's reference splitter: . ! ? and newlines; fragments of <= 10 characters dropped."""
    return [s.strip() for s in regex.split(r"[.!?\n]", text) if len(s.strip()) > 10]


def baseline_vectors(index: Path, baseline: str, texts: list[str], embedder: Embedder) -> np.ndarray:
    """Document embeddings of `texts`, kept beside the index as `<index>-<baseline>.npz` and reused
    while the model, the backend and the texts are the same (the baselines never change with our code)."""
    path = index.with_name(f"{index.name}-{baseline}.npz")
    digest = hashlib.sha256(json.dumps([embedder.model_name, embedder.backend, texts]).encode()).hexdigest()
    if path.exists():
        with np.load(path) as stored:
            if str(stored["key"]) == digest:
                log(f"  {len(texts)} baseline vectors reused from {path.name}")
                return stored["vectors"]
    log(f"  embedding {len(texts)} texts for {path.name}")
    vectors = embedder.encode_documents(texts, batch_size=16)
    np.savez(path, key=digest, vectors=vectors)
    return vectors


class Methods:
    """The four rankers over one dataset, sharing the question embeddings."""

    def __init__(
        self, snapshot: IndexSnapshot, corpus: Corpus, embedder: Embedder, questions: list[dict], chunk_text: bool
    ) -> None:
        self.snapshot, self.corpus, self.embedder = snapshot, corpus, embedder
        texts = [q["question"] for q in questions]
        self.query_vectors = dict(zip(texts, embedder.encode_queries(texts, batch_size=64)))
        index = Path(snapshot.uri)
        if chunk_text:
            self.text_vectors = baseline_vectors(index, "naive", corpus.texts, embedder)
        pieces = [(cid, s) for cid, text in zip(corpus.chunk_ids, corpus.texts) for s in reference_sentences(text)]
        self.reference_owner = np.array([cid for cid, _ in pieces])
        self.reference_text = [s for _, s in pieces]
        vectors = baseline_vectors(index, "reference", self.reference_text, embedder)
        self.reference_sentences = SentenceMatrix(self.reference_owner, vectors)

    def semantic(self, question: dict, k: int) -> list[str]:
        hits = retrieval.semantic_search(self.snapshot, self.query_vectors[question["question"]], k)
        return [hit.chunk.chunk_id for hit in hits]

    def keyword(self, question: dict, k: int) -> list[str]:
        found = keyword_search(self.snapshot, extract_keywords(question["question"]), k)
        return [hit.chunk.chunk_id for hit in found.hits]

    def naive(self, question: dict, k: int) -> list[str]:
        hits = retrieval.naive_search(self.snapshot, self.query_vectors[question["question"]], k)
        return [hit.chunk.chunk_id for hit in hits]

    def naive_text(self, question: dict, k: int) -> list[str]:
        ranked = vector_ranking(self.corpus.chunk_ids, self.text_vectors, self.query_vectors[question["question"]], k)
        return [cid for cid, _ in ranked]

    def reference(self, question: dict, k: int) -> list[str]:
        ranked = self.reference_sentences.best_sentence_ranking(self.query_vectors[question["question"]], k)
        return [cid for cid, _ in ranked]

    def tool_text(self, method: str, question: dict) -> str:
        """The text the tool itself answers a new conversation with at top_k=5 (header, ids, titles, snippets)."""
        if method == "semantic":
            hits = retrieval.semantic_search(self.snapshot, self.query_vectors[question["question"]], 5)
            shown = [snippet(found, set()) for found in self.excerpts(hits, [leading] * len(hits))]
            return rendered.semantic_text(
                rendered.semantic_output(hits, HANDLE, "", None, shown, "their best sentence")
            )
        found = keyword_search(self.snapshot, extract_keywords(question["question"]), 5)
        cuts = [keyword_cut(hit.keywords, "word") for hit in found.hits]
        shown = [snippet(excerpt, set()) for excerpt in self.excerpts(found.hits, cuts)]
        return keyword_text(keyword_output(found, HANDLE, "", None, shown))

    def excerpts(self, hits: list[retrieval.Hit], cuts: list[Callable[[str], str]]) -> list[Excerpt]:
        """What each hit shows of its chunk, as the tools choose it (snippets.excerpt)."""
        chunks = self.snapshot.chunks.by_id([hit.chunk.chunk_id for hit in hits])
        return [excerpt(chunks[hit.chunk.chunk_id].sentences, hit.matched, cut) for hit, cut in zip(hits, cuts)]

    def returned_text(self, method: str, question: dict) -> str:
        """What one call at top_k=5 shows the host: for our searches, the snippets as the tools choose them."""
        if method == "semantic":
            hits = retrieval.semantic_search(self.snapshot, self.query_vectors[question["question"]], 5)
            return " ".join(s for found in self.excerpts(hits, [leading] * len(hits)) for s in found.sentences)
        if method == "keyword":
            found = keyword_search(self.snapshot, extract_keywords(question["question"]), 5)
            cuts = [keyword_cut(hit.keywords, "word") for hit in found.hits]
            return " ".join(s for excerpt in self.excerpts(found.hits, cuts) for s in excerpt.sentences)
        if method in ("naive", "naive_text"):
            index = {cid: i for i, cid in enumerate(self.corpus.chunk_ids)}
            return " ".join(self.corpus.texts[index[cid]] for cid in getattr(self, method)(question, 5))
        query = self.query_vectors[question["question"]]
        best = [cid for cid, _ in self.reference_sentences.best_sentence_ranking(query, 5)]
        shown = np.isin(self.reference_owner, best) & (self.reference_sentences.vectors @ query > 0.3)
        return " ".join(self.reference_text[i] for i in np.flatnonzero(shown))


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


def evaluate(rank: Ranker, labels: Labels) -> dict[str, float]:
    """recall@k: share of a question's gold ids among the ids of its top k chunks; all@5: every one in the top 5."""
    recalls = {k: [] for k in KS}
    complete = []
    for question, gold in zip(labels.questions, labels.gold):
        ranked = [labels.unit_of[cid] for cid in rank(question, max(KS))]
        for k in KS:
            recalls[k].append(len(gold & set(ranked[:k])) / len(gold))
        complete.append(gold <= set(ranked[:5]))
    result = {f"recall@{k}": 100 * float(np.mean(v)) for k, v in recalls.items()}
    result["all@5"] = 100 * float(np.mean(complete))
    return result


def check_against_brute_force(methods: Methods, questions: list[dict]) -> dict[str, float]:
    """Share of sampled questions where the tools equal their definitions (ids and scores)."""
    snapshot, corpus = methods.snapshot, methods.corpus
    sentences = SentenceMatrix(*index_dump.sentence_vectors(snapshot))
    chunk_ids, chunk_vectors = index_dump.chunk_vectors(snapshot)
    words = WordCorpus(corpus.chunk_ids, corpus.titles, corpus.texts, corpus.lengths)
    sample = questions[:CHECK_SAMPLE]
    agree = {"semantic_search": 0, "keyword_search": 0, "keyword_search substring": 0, "naive_embedding_search": 0}
    for question in sample:
        query = methods.query_vectors[question["question"]]
        hits = retrieval.semantic_search(snapshot, query, 10)
        agree["semantic_search"] += same_ranking(hits, sentences.best_sentence_ranking(query, 10))
        keywords = extract_keywords(question["question"])
        found = keyword_search(snapshot, keywords, 10)
        expected = words.ranking(keywords, 10)
        agree["keyword_search"] += same_ranking(found.hits, expected)
        found = keyword_search(snapshot, keywords, 10, "substring")
        expected = keyword_ranking(corpus.chunk_ids, corpus.texts, keywords, 10)
        agree["keyword_search substring"] += same_ranking(found.hits, expected)
        hits = retrieval.naive_search(snapshot, query, 10)
        agree["naive_embedding_search"] += same_ranking(hits, vector_ranking(chunk_ids, chunk_vectors, query, 10))
    return {tool: 100 * count / len(sample) for tool, count in agree.items()}


def same_ranking(hits: list[retrieval.Hit], expected: list[tuple[str, float]]) -> bool:
    return [h.chunk.chunk_id for h in hits] == [cid for cid, _ in expected] and all(
        abs(h.score - score) < 1e-5 for h, (_, score) in zip(hits, expected)
    )


def run_dataset(dataset: Dataset, embedder: Embedder, rebuild: bool, chunk_text: bool) -> dict:
    snapshot = build(dataset, rebuild, embedder.backend)
    corpus = Corpus(snapshot)
    label = evidence_labels if dataset.name in EVIDENCE_DATASETS else passage_labels
    labels = label(dataset.questions, corpus).first(dataset.limit)
    if labels.counts:
        log(f"  evidence labels: {labels.counts}")
    methods = Methods(snapshot, corpus, embedder, labels.questions, chunk_text)
    results: dict = {"questions": len(labels.questions), "chunks": len(corpus.chunk_ids)}
    if labels.counts:
        results["evidence_labels"] = labels.counts
    for name in (*METHODS, *(["naive_text"] if chunk_text else [])):
        started = time.perf_counter()
        results[name] = evaluate(getattr(methods, name), labels)
        texts = [methods.returned_text(name, q) for q in labels.questions]
        results[name]["tokens/call"] = float(np.mean(embedder.count_tokens(texts)))
        if name in ("keyword", "semantic"):
            shown = [methods.tool_text(name, q) for q in labels.questions]
            results[name]["text tokens/call"] = float(np.mean(embedder.count_tokens(shown)))
        log(f"  {name}: recall@5 {results[name]['recall@5']:.1f} ({time.perf_counter() - started:.0f} s)")
    results["brute_force_agreement"] = check_against_brute_force(methods, labels.questions)
    return results


def print_table(results: dict[str, dict]) -> None:
    names = list(results)
    rows = [
        (method, metric)
        for method in (*METHODS, *(["naive_text"] if "naive_text" in results[names[0]] else []))
        for metric in ("recall@1", "recall@5", "recall@10", "all@5", "tokens/call", "text tokens/call")
        if metric in results[names[0]][method]
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
            f"brute-force agreement semantic {agreement['semantic_search']:.0f}%, keyword "
            f"{agreement['keyword_search']:.0f}% (substring {agreement['keyword_search substring']:.0f}%), "
            f"naive {agreement['naive_embedding_search']:.0f}%" + evidence_note(results[name])
        )


def evidence_note(result: dict) -> str:
    """For an evidence corpus: how many evidence sentences became gold chunks."""
    counts = result.get("evidence_labels")
    if not counts:
        return ""
    return (
        f"; evidence labels kept {counts['kept']}/{counts['evidence']} (dropped: {counts['low_coverage']} low "
        f"coverage, {counts['ambiguous']} ambiguous); {counts['questions_skipped']} questions without gold "
        f"skipped, {result['questions']} evaluated"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--max-questions", type=int, default=None, help="evaluate the first N questions with gold ids")
    parser.add_argument("--quick", action="store_true", help="40 questions per dataset on a reduced corpus (< 3 min)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild cached indexes")
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND, help="embedding backend (all methods)")
    parser.add_argument(
        "--compare-chunk-vectors",
        action="store_true",
        help="also rank by each chunk's text embedded (naive_text) against the index's chunk vectors (naive)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "quality.json")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"no benchmark data at {args.data}; pass --data", file=sys.stderr)
        return 2
    embedder = Embedder(backend=args.backend).load()
    results = {}
    for name in args.datasets:
        log(f"{name}: loading")
        dataset = load(name, args.data, args.quick, args.max_questions)
        results[name] = run_dataset(dataset, embedder, args.rebuild, args.compare_chunk_vectors)
    print_table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"quick": args.quick, "backend": embedder.backend, "results": results}, indent=2))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
