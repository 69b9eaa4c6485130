"""Keywords whose punctuation or capitals matter ("T-ALL", "ALL", "--table", "C++"), matched as
written (words.MarkedKeyword), beside the same keywords matched by their words as before, on the
shared corpora; the brute-force agreement; and what the marked tokens cost the index.

For each corpus: the listed keywords and a sample of its own marked tokens (acronyms in capitals
and punctuated terms). Per keyword, the chunks matched and whether that count is exact, as written
and by words ("T-ALL" by words is "t all", a phrase bounded by its rarest word). Uses bench/quality.py's
indexes (built once, cached in bench/results/work).

    python bench/marked_keywords.py [--datasets graphrag-medical musique] [--sample 40]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow as pa  # noqa: E402
from arag_mcp.indexer.index.keywords import (  # noqa: E402
    MarkedKeyword,
    keyword_search,
    words_of,
)
from arag_mcp.indexer.index.keywords.definition import WordCorpus  # noqa: E402
from arag_mcp.indexer.index.keywords.terms import MARKED_PREFIX, chunk_terms, chunk_words  # noqa: E402
from common import BENCH_DATA, RESULTS, log, write_json  # noqa: E402
from quality import DATASETS, Corpus, build, load  # noqa: E402

LISTED = {
    "graphrag-medical": ["ALL", "AML", "T-ALL", "B-ALL", "CT", "MRI", "IV", "CD4", "HIV-1", "COVID-19", "Ph+"],
}
TOP_K = 5


def by_words(keyword: str) -> str:
    """The keyword as whole-word matching read it before: its words, lower-cased, in a row."""
    return " ".join(words_of([keyword.lower()])[0])


def measured(snapshot, keyword: str) -> dict:
    started = time.perf_counter()
    found = keyword_search(snapshot, [keyword], TOP_K)
    elapsed = time.perf_counter() - started
    [count] = found.per_keyword
    return {"chunks": [count.at_least, count.at_most], "exact": count.exact, "ms": round(elapsed * 1000, 2)}


def marked_keywords(name: str, data: Path, sample: int) -> dict:
    snapshot = build(load(name, data, quick=False, max_questions=None), rebuild=False, backend="onnx")
    corpus = Corpus(snapshot)
    lookup = snapshot.keywords
    tokens = [term[len(MARKED_PREFIX) :] for term in lookup.words[: lookup.token_count].to_pylist()]
    own = sorted(token for token in tokens if 3 <= len(token) <= 20)
    picked = sorted(random.Random(0).sample(own, min(sample, len(own))))
    keywords = list(dict.fromkeys(LISTED.get(name, []) + picked))
    rows = []
    for keyword in keywords:
        if MarkedKeyword.of(keyword) is None:
            continue
        rows.append(
            {
                "keyword": keyword,
                "as_written": measured(snapshot, keyword),
                "by_words": measured(snapshot, by_words(keyword)),
            }
        )
    words = WordCorpus(corpus.chunk_ids, corpus.titles, corpus.texts, corpus.lengths)
    agree = sum(
        [(hit.chunk.chunk_id, hit.score) for hit in keyword_search(snapshot, [row["keyword"]], TOP_K).hits]
        == words.ranking([row["keyword"]], TOP_K)
        for row in rows
    )
    texts = pa.array(corpus.texts, pa.string())
    started = time.perf_counter()
    word_lists, _ = chunk_words(texts)
    words_seconds = time.perf_counter() - started
    started = time.perf_counter()
    term_lists, _ = chunk_terms(texts)
    terms_seconds = time.perf_counter() - started
    word_postings, term_postings = len(pa.compute.list_flatten(word_lists)), len(pa.compute.list_flatten(term_lists))
    return {
        "chunks": len(corpus.chunk_ids),
        "vocabulary": {"words": len(lookup.words) - lookup.token_count, "marked_tokens": lookup.token_count},
        "postings": {"words": word_postings, "marked_tokens": term_postings - word_postings},
        "cutting_seconds": {"words": round(words_seconds, 3), "words_and_marked_tokens": round(terms_seconds, 3)},
        "exact_as_written": sum(row["as_written"]["exact"] for row in rows),
        "exact_by_words": sum(row["by_words"]["exact"] for row in rows),
        "ms_p50": {
            "as_written": statistics.median(row["as_written"]["ms"] for row in rows),
            "by_words": statistics.median(row["by_words"]["ms"] for row in rows),
        },
        "brute_force_agreement": [agree, len(rows)],
        "keywords": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=["graphrag-medical", "musique"])
    parser.add_argument("--sample", type=int, default=40, help="the corpus's own marked tokens tried per set")
    parser.add_argument("--out", type=Path, default=RESULTS / "marked_keywords.json")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"no benchmark data at {args.data}; pass --data", file=sys.stderr)
        return 2
    results = {}
    for name in args.datasets:
        log(f"{name}: marked keywords")
        results[name] = marked_keywords(name, args.data, args.sample)
        write_json(args.out, results)
        summary = {key: value for key, value in results[name].items() if key != "keywords"}
        log(f"{name}: {json.dumps(summary)}")
    print(json.dumps(results, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
