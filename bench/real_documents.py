"""Real documents: a large Python package's source and part of the Debian documentation, each indexed
whole, and 20-32 questions a developer would ask of each, ranked by keyword search, semantic search and
the two together.

Corpora, each built with `arag-index build SOURCE... --index DIR` (the default model) in a process of
its own, timed, its stderr kept (bench/results/work/real_documents/NAME-build.log) and its summary
lines read: files indexed, files skipped and paths left out by reason, chunks, sentences.

- pip: the source of the pip installed in this environment (23.2.1 when written), copied to
  bench/results/work/real_documents/sources/pip without its __pycache__ (the indexer leaves out
  anything under site-packages, and the copy keeps the folder's name). Its `_vendor` folder is
  left out by the indexer's vendored-folder rule, as intended.
- debian: the folders of DEBIAN_PACKAGES under /usr/share/doc (pip's documentation as Debian
  ships it, reST and Markdown, many gzipped; apt's README and the index of its configuration
  directives; sed's FAQ and NEWS; less; make), and the Valgrind and bzip2 manuals, which Debian
  ships as gzipped PDF (DEBIAN_MANUALS), about 2.4 MB of text as read: the whole of
  /usr/share/doc (117 MB, 4,069 files) would take hours to embed on 2 cores.

Questions: bench/real_documents_pip.json and bench/real_documents_debian.json. Each has the
keywords a model would pass to keyword_search and its answers, any of which answers it: a file (as
the index names its source) with either a `section`, a definition's qualified name in code (a chunk
answers when it holds part of the definition: from its first line, decorators included, to the next
definition not inside it, so a class's methods count as part of the class), or a `phrase`, words
found in the chunk's text (whitespace folded). Every answer must be found in the index before any
question is asked, or the run stops naming it.

Ranks, 1 to DEPTH (else a miss), from the server's own functions on the opened index, each question
asked once:

- keyword: `keyword_search` with the question's keywords, as the tool runs it: a keyword that
  matches nothing as written has the identifiers holding its words searched in its place
  (identifiers.stand_ins), and a result that nearly duplicates one above it takes no place (the
  tool searches again without it). Asked with top_k DEPTH; `keyword, top_k 5 call` asks with the
  tool's default top_k, where every keyword's best chunk is sure of a place, which may bring up a
  chunk that ranks below 5 in the longer list.
- semantic: `semantic_search` of the question's text (near-duplicates folded as the tool folds them).
- either: the better of the two ranks: a host that calls both and reads both lists.

Each mode is also ranked by file (`summary_by_file`): the place of the first chunk of a file that
holds an answer, whether or not that chunk holds it (a host that finds the file can read on). The
results name each mode's first SHOWN results per question, to see what came first on a miss.

    python bench/real_documents.py --build            # builds both indexes anew (2-8 minutes each), then asks
    python bench/real_documents.py                    # reuses the indexes
    python bench/real_documents.py --corpora pip      # one corpus

Results go to bench/results/real_documents.json as each corpus ends. Figures: bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from arag_mcp.indexer import DEFAULT_MODEL, limit_cpu_threads  # noqa: E402

limit_cpu_threads()

import index_dump  # noqa: E402
from arag_mcp.indexer import (  # noqa: E402
    Chunk,
    Embedder,
    IndexSnapshot,
    open_index,
)
from arag_mcp.indexer.index.keywords import (  # noqa: E402
    keyword_search,
    stand_ins,
    with_stand_ins,
)
from arag_mcp.indexer.sources.code import GRAMMARS, _definitions  # noqa: E402
from arag_mcp.server.search.limits import EXCLUDE_ROUNDS, MAX_KEYWORDS  # noqa: E402
from arag_mcp.server.search.near_duplicates import NearDuplicates  # noqa: E402
from arag_mcp.server.search.retrieval import semantic_search  # noqa: E402
from common import RESULTS, log, write_json  # noqa: E402

BENCH = Path(__file__).resolve().parent
WORK = RESULTS / "work" / "real_documents"
DEPTH = 20
"""Ranks past this are misses."""
DEFAULT_TOP_K = 5
"""The tools' default top_k: the keyword call a host makes without asking for more."""
DEBIAN_DOC = Path("/usr/share/doc")
DEBIAN_PACKAGES = ("python3-pip", "apt", "sed", "less", "make")
"""Package folders of /usr/share/doc with real documentation that together build in under 10
minutes on 2 shared cores (1.3 MB of text as read; 50 of their 133 files gzipped)."""
DEBIAN_MANUALS = ("valgrind/valgrind_manual.pdf.gz", "bzip2/manual.pdf.gz")
"""Manuals Debian ships as gzipped PDF only, added as files (1.1 MB of text as read): a long
manual whose title page and short lines compete with every section, and a short one."""
MODES = ("keyword", "semantic", "either")
SHOWN = 3
"""Results of each mode named per question in the results, to see what came first on a miss."""


def pip_sources(build: bool) -> list[Path]:
    """pip's source copied to WORK/sources/pip (anew when building)."""
    copy = WORK / "sources" / "pip"
    if build:
        spec = importlib.util.find_spec("pip")
        if spec is None or spec.origin is None:
            raise SystemExit("pip is not installed in this environment")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(Path(spec.origin).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return [copy]


def debian_sources(build: bool) -> list[Path]:
    sources = [DEBIAN_DOC / package for package in DEBIAN_PACKAGES] + [DEBIAN_DOC / file for file in DEBIAN_MANUALS]
    missing = [str(source) for source in sources if not source.exists()]
    if missing:
        raise SystemExit(f"{missing[0]} is missing: install its Debian package")
    return sources


CORPORA = {"pip": pip_sources, "debian": debian_sources}


# -- building -----------------------------------------------------------------------------------

SUMMARY = re.compile(r"^(skipped \d+ file\(s\) or record\(s\)|left out \d+ path\(s\)), listed above: (.*)$")
HOLDS = re.compile(
    r"the index holds (\d+) documents, (\d+) chunks, (\d+) sentences; embedded (\d+) sentences in ([\d.]+) s"
)


def by_reason(listed: str) -> dict[str, int]:
    """ "6 empty, 1 unsupported type .typed" as {"empty": 6, ...} (a reason's own commas are in numbers)."""
    counts = {}
    for part in re.split(r", (?=\d)", listed):
        count, reason = part.split(" ", 1)
        counts[reason] = int(count)
    return counts


def build(name: str, sources: Sequence[Path], uri: Path) -> dict:
    """`arag-index build` of `sources` into a new `uri`, timed; what its summary lines say."""
    shutil.rmtree(uri, ignore_errors=True)
    command = [str(Path(sys.executable).with_name("arag-index")), "build", *map(str, sources), "--index", str(uri)]
    command.append("--quiet")
    log(f"{name}: {' '.join(command)}")
    load_before = os.getloadavg()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=WORK, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (WORK / f"{name}-build.log").write_text(done.stderr + done.stdout)
    if done.returncode:
        raise SystemExit(f"{name}: arag-index build failed ({done.returncode}):\n{done.stderr[-3000:]}")
    lines = (done.stderr + done.stdout).splitlines()
    info: dict = {
        "command": " ".join(["arag-index", *command[1:]]),
        "wall_seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_after.ru_utime - cpu_before.ru_utime + cpu_after.ru_stime - cpu_before.ru_stime, 1),
        "load_average_before": [round(value, 2) for value in load_before],
        "load_average_after": [round(value, 2) for value in os.getloadavg()],
        "skipped": {},
        "left_out": {},
        "summary_lines": [],
    }
    for line in lines:
        summary = SUMMARY.match(line)
        if summary:
            info["skipped" if line.startswith("skipped") else "left_out"] = by_reason(summary.group(2))
            info["summary_lines"].append(line)
        holds = HOLDS.search(line)
        if holds:
            documents, chunks, sentences, embedded, embed_seconds = holds.groups()
            info |= {"documents": int(documents), "chunks": int(chunks), "sentences": int(sentences)}
            info |= {"embedded_sentences": int(embedded), "embedding_seconds": float(embed_seconds)}
            info["summary_lines"].append(line)
    info["left_out_paths"] = [line.split(":")[0] for line in lines if ": left out, " in line]
    (WORK / f"{name}-build.json").write_text(json.dumps(info, indent=2))
    log(f"{name}: built in {seconds:.0f} s; " + "; ".join(info["summary_lines"]))
    return info


# -- locators -----------------------------------------------------------------------------------


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class Located:
    """Per chunk id, where its text lies in its file (code), and per (file, section) the spans of the
    definition of that name."""

    chunks: dict[str, Chunk]
    spans: dict[str, tuple[int, int]]
    sections: dict[tuple[str, str], list[tuple[int, int]]]

    @classmethod
    def read(cls, snapshot: IndexSnapshot) -> Located:
        chunks = {chunk.chunk_id: chunk for chunk in index_dump.all_chunks(snapshot)}
        by_document: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in chunks.values():
            by_document[chunk.doc_id].append(chunk)
        spans: dict[str, tuple[int, int]] = {}
        sections: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        for doc_id, parts in by_document.items():
            path = Path(doc_id)
            if path.suffix not in GRAMMARS or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            at = 0
            for chunk in sorted(parts, key=lambda chunk: chunk.part):
                start = text.find(chunk.text, at)
                if start < 0:
                    raise SystemExit(f"{doc_id}: chunk {chunk.chunk_id} is not the file's text in order")
                spans[chunk.chunk_id] = (start, start + len(chunk.text))
                at = start + len(chunk.text)
            definitions = _definitions(path.suffix, text)
            for number, (start, names) in enumerate(definitions):
                inside = (later for later, other in definitions[number + 1 :] if other[: len(names)] != names)
                end = next(inside, len(text))
                sections[(parts[0].source, ".".join((path.stem, *names)))].append((start, end))
        return cls(chunks, spans, dict(sections))

    def answers(self, chunk: Chunk, answer: dict) -> bool:
        if chunk.source != answer["file"]:
            return False
        if "phrase" in answer:
            return flat(answer["phrase"]) in flat(chunk.text)
        begin, end = self.spans[chunk.chunk_id]
        return any(
            start < end and begin < stop for start, stop in self.sections.get((answer["file"], answer["section"]), [])
        )

    def answered(self, chunk: Chunk, *, question: dict) -> bool:
        return any(self.answers(chunk, answer) for answer in question["answers"])

    def check(self, questions: list[dict]) -> None:
        """Every answer must be held by a chunk: a locator nothing satisfies would make a miss mean nothing."""
        problems = []
        for question in questions:
            for answer in question["answers"]:
                if "section" in answer and (answer["file"], answer["section"]) not in self.sections:
                    problems.append(f"no definition {answer['section']} in {answer['file']}")
                elif not any(self.answers(chunk, answer) for chunk in self.chunks.values()):
                    problems.append(f"no chunk of {answer['file']} holds {answer.get('phrase') or answer['section']!r}")
        if problems:
            raise SystemExit("locators not in the index:\n  " + "\n  ".join(problems))


# -- asking -------------------------------------------------------------------------------------


def keyword_hits(snapshot: IndexSnapshot, keywords: list[str], top_k: int) -> tuple[list[Chunk], list[str]]:
    """keyword_search as the tool runs it in a new conversation (the identifiers that stand in for
    keywords matching nothing; near-duplicates passed over), and the keywords searched."""
    findings = keyword_search(snapshot, keywords, top_k)
    standing = stand_ins(snapshot.keywords, findings.keywords, findings.per_keyword)
    if standing:
        keywords = with_stand_ins(keywords, standing, MAX_KEYWORDS)
    exclude = np.zeros(len(snapshot.catalogue), dtype=bool)
    for _ in range(EXCLUDE_ROUNDS):
        findings = keyword_search(snapshot, keywords, top_k, "word", None, 0, exclude)
        same = NearDuplicates()
        twins = [hit.chunk.chunk_id for hit in findings.hits if same.original(hit.chunk) is not None]
        if not twins:
            break
        exclude[snapshot.catalogue.numbers_of(twins)] = True
    return [hit.chunk for hit in findings.hits], keywords


def semantic_hits(snapshot: IndexSnapshot, chunks: dict[str, Chunk], vector: np.ndarray) -> list[Chunk]:
    """semantic_search's first DEPTH results, a near-duplicate of a result above it taking no place."""
    same = NearDuplicates()
    found = [chunks[hit.chunk.chunk_id] for hit in semantic_search(snapshot, vector, 2 * DEPTH)]
    return [chunk for chunk in found if same.original(chunk) is None][:DEPTH]


def named(chunk: Chunk) -> str:
    """A result as the results JSON names it: its file and its section, where it has one."""
    return f"{chunk.source} › {' › '.join(chunk.heading_path)}" if chunk.heading_path else chunk.source


def rank(found: list[Chunk], answers: Callable[[Chunk], bool]) -> int | None:
    return next((place for place, chunk in enumerate(found, 1) if answers(chunk)), None)


def better(*ranks: int | None) -> int | None:
    return min((r for r in ranks if r is not None), default=None)


def summarise(ranks: list[int | None]) -> dict[str, float]:
    """Counts in the top k, the mean reciprocal rank, and the mean rank (a miss counted as DEPTH + 1)."""
    found = [rank for rank in ranks if rank is not None]
    counts = {f"top{k}": sum(rank <= k for rank in found) for k in (1, 5, 10, DEPTH)}
    mean_rank = sum(rank or DEPTH + 1 for rank in ranks) / len(ranks)
    return counts | {"mrr": round(sum(1 / rank for rank in found) / len(ranks), 3), "mean_rank": round(mean_rank, 2)}


def ask(snapshot: IndexSnapshot, embedder: Embedder, questions: list[dict]) -> dict:
    """Each question's ranks: of the first chunk that answers it (`keyword`, `semantic`, `either`)
    and, under `file`, of the first chunk of a file that holds an answer."""
    located = Located.read(snapshot)
    located.check(questions)
    vectors = embedder.encode_queries([q["question"] for q in questions])
    rows = []
    for question, vector in zip(questions, vectors):
        found, searched = keyword_hits(snapshot, question["keywords"], DEPTH)
        nearest = semantic_hits(snapshot, located.chunks, vector)
        files = {answer["file"] for answer in question["answers"]}
        row = {"question": question["question"], "kind": question.get("kind"), "keywords": question["keywords"]}
        if searched != question["keywords"]:
            row["keywords_searched"] = searched
        for key, answers in (("", partial(located.answered, question=question)), ("file", lambda c: c.source in files)):
            ranks = {"keyword": rank(found, answers), "semantic": rank(nearest, answers)}
            ranks["either"] = better(*ranks.values())
            row |= {key: ranks} if key else ranks
        default_call = keyword_hits(snapshot, question["keywords"], DEFAULT_TOP_K)[0]
        row["keyword_top5_call"] = rank(default_call, partial(located.answered, question=question))
        row |= {"keyword_first": list(map(named, found[:SHOWN])), "semantic_first": list(map(named, nearest[:SHOWN]))}
        rows.append(row)
        shown = " ".join(f"{row[mode] or '-':>2}" for mode in MODES)
        by_file = " ".join(f"{row['file'][mode] or '-':>2}" for mode in MODES)
        log(f"  {shown}  (files: {by_file})  {question['question']}")
    summary = {mode: summarise([row[mode] for row in rows]) for mode in MODES}
    summary["keyword, top_k 5 call"] = {"top5": sum(row["keyword_top5_call"] is not None for row in rows)}
    by_file = {mode: summarise([row["file"][mode] for row in rows]) for mode in MODES}
    return {"chunks": len(located.chunks), "files": len({c.source for c in located.chunks.values()})} | {
        "summary": summary,
        "summary_by_file": by_file,
        "questions": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", action="store_true", help="build the indexes anew (else reuse them)")
    parser.add_argument("--corpora", nargs="+", choices=sorted(CORPORA), default=list(CORPORA))
    parser.add_argument("--out", type=Path, default=RESULTS / "real_documents.json")
    args = parser.parse_args(argv)

    WORK.mkdir(parents=True, exist_ok=True)
    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    embedder = None
    for name in args.corpora:
        uri = WORK / f"{name}-idx"
        sources = CORPORA[name](args.build)
        if args.build:
            info = build(name, sources, uri)
        elif (WORK / f"{name}-build.json").is_file():
            info = json.loads((WORK / f"{name}-build.json").read_text())
        else:
            raise SystemExit(f"{uri} is not built: run with --build")
        spec = json.loads((BENCH / f"real_documents_{name}.json").read_text(encoding="utf-8"))
        snapshot = open_index(str(uri))
        if snapshot.manifest.model != DEFAULT_MODEL:
            raise SystemExit(f"{uri} was built with {snapshot.manifest.model}, not the default model")
        embedder = embedder or Embedder().load()
        log(f"{name}: {len(spec['questions'])} questions (ranks: keyword, semantic, either)")
        results[name] = {"corpus": spec["corpus"], "build": info} | ask(snapshot, embedder, spec["questions"])
        write_json(args.out, results)

    print(
        f"corpus | mode | top-1 | top-5 | top-10 | top-{DEPTH} | MRR | mean rank | by file: top-1 | top-5 | top-10 | MRR"
    )
    for name in args.corpora:
        for mode in MODES:
            figures, by_file = results[name]["summary"][mode], results[name]["summary_by_file"][mode]
            cells = [figures[f"top{k}"] for k in (1, 5, 10, DEPTH)] + [f"{figures['mrr']:.3f}", figures["mean_rank"]]
            cells += [by_file[f"top{k}"] for k in (1, 5, 10)] + [f"{by_file['mrr']:.3f}"]
            print(f"{name} | {mode} | " + " | ".join(map(str, cells)))
        call = results[name]["summary"]["keyword, top_k 5 call"]["top5"]
        print(f"{name} | keyword, one call at top_k {DEFAULT_TOP_K}: {call} answered")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
