"""How often `keyword_search([title])` puts the page with that title first, for the titles that are
unique in each shared corpus (a page a host names by its title must come first, whatever its length).

Uses bench/quality.py's indexes (built once, cached in bench/results/work). Titles the tool would
refuse as keywords (too long, no letter or digit) are counted apart.

    python bench/title_rank.py [--datasets musique 2wikimultihopqa ...] [--sample 0] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer.index.keywords import (
    keyword_search,
    words_of,
)
from arag_mcp.server.search.limits import MAX_KEYWORD_CHARS, MAX_KEYWORD_PIECES, MAX_KEYWORD_WORDS  # noqa: E402
from common import BENCH_DATA, RESULTS, log, write_json  # noqa: E402
from quality import DATASETS, Corpus, build, load  # noqa: E402


def accepted(title: str) -> bool:
    """Whether the tool takes `title` as one keyword (the bounds of server/tools/checks.py)."""
    pieces = words_of([title.lower()])[0]
    return (
        0 < len(pieces) <= MAX_KEYWORD_PIECES
        and len(title) <= MAX_KEYWORD_CHARS
        and len(title.split()) <= MAX_KEYWORD_WORDS
    )


def title_rank(name: str, data: Path, sample: int, rebuild: bool) -> dict:
    snapshot = build(load(name, data, quick=False, max_questions=None), rebuild=rebuild, backend="onnx")
    corpus = Corpus(snapshot)
    documents = {}
    for chunk_id, title in zip(corpus.chunk_ids, corpus.titles):
        documents.setdefault(corpus.doc_of[chunk_id], title)
    uses = Counter(documents.values())
    unique = sorted(title for title, count in uses.items() if count == 1 and title.strip())
    refused = [title for title in unique if not accepted(title)]
    tried = [title for title in unique if accepted(title)]
    if sample and len(tried) > sample:
        tried = sorted(random.Random(0).sample(tried, sample))
    owner = {title: doc for doc, title in documents.items()}
    misses = []
    for title in tried:
        hits = keyword_search(snapshot, [title], 5).hits
        if not hits or hits[0].chunk.doc_id != owner[title]:
            misses.append({"title": title, "first": hits[0].chunk.title if hits else None})
    first = len(tried) - len(misses)
    return {
        "unique_titles": len(unique),
        "tried": len(tried),
        "refused_by_the_tool": len(refused),
        "first": first,
        "share_first": round(first / len(tried), 4) if tried else None,
        "misses": misses[:20],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=BENCH_DATA)
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--sample", type=int, default=0, help="titles tried per set (0: all)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached indexes")
    parser.add_argument("--out", type=Path, default=RESULTS / "title_rank.json")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"no benchmark data at {args.data}; pass --data", file=sys.stderr)
        return 2
    results = {}
    for name in args.datasets:
        log(f"{name}: titles")
        results[name] = title_rank(name, args.data, args.sample, args.rebuild)
        write_json(args.out, results)
        log(f"{name}: {results[name]['first']} of {results[name]['tried']} first ({results[name]['share_first']})")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
