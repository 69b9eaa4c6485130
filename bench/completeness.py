"""Whether a build of a real folder keeps every document whole, for this checkout or an older commit.

    python bench/completeness.py /tmp/docs                       # this checkout's arag-index
    python bench/completeness.py /tmp/docs --revision 5b7d33f    # the indexer of an older commit
    python bench/completeness.py /tmp/docs --sync                # then `arag-index sync` with this checkout

Builds the folder into a fresh index with `arag-index build` (that revision's, run from a copy of its
packages), then reads the committed tables directly (LanceDB, not the indexer's reader) and prints:
the documents the build summary reports, the documents `arag-index list` shows, the documents and
chunks the chunks table holds, the documents whose chunks are not each of 0..parts-1 once (with
their chunks present and expected), duplicate chunk ids, chunks missing from their document's
count, and the sentences stored against the sentences the documents had. With `--sync`, the same
after this checkout's `arag-index sync` of that index (an older build's damage is repaired).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import lancedb
import pyarrow as pa
from arag_mcp.indexer.index.schema import CHUNKS, DOCUMENTS, SENTENCES, ChunkColumn, DocumentColumn, SentenceColumn

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"indexer": "indexer", "server": "server"}


def packages_at(revision: str) -> Path:
    """A folder holding `arag_mcp.indexer` and `arag_mcp.server` as they were at `revision`."""
    folder = Path(tempfile.mkdtemp(prefix=f"arag-{revision}-"))
    for package, path in PACKAGES.items():
        target = folder / "arag_mcp" / package
        target.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", revision, path], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target), "--strip-components=1"], input=archive, check=True)
    (folder / "arag_mcp" / "__init__.py").touch()
    return folder


def indexer(args: list[str], packages: Path | None) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    if packages is not None:
        environment["PYTHONPATH"] = str(packages)
    command = [sys.executable, "-m", "arag_mcp.indexer", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environment, check=False)


def report(index: Path, summary_line: str, packages: Path | None) -> dict[str, object]:
    """What the build said, what `list` shows and what the committed tables hold."""
    manifest = json.loads((index / "manifest.json").read_text())
    db = lancedb.connect(str(index))

    def table(name: str, columns: list[str]) -> pa.Table:
        opened = db.open_table(name)
        opened.checkout(manifest["tables"][name])
        return opened.search().select(columns).limit(None).to_arrow()

    chunks = table(CHUNKS, [ChunkColumn.ID, ChunkColumn.DOC_ID, ChunkColumn.PART, ChunkColumn.PARTS]).to_pylist()
    sentences = table(SENTENCES, [SentenceColumn.CHUNK_ID]).num_rows
    documents = table(DOCUMENTS, [DocumentColumn.ID, DocumentColumn.CHUNKS, DocumentColumn.SENTENCES]).to_pylist()
    listed = indexer(["list", "--index", str(index), "--json"], packages)
    by_document: dict[str, list[int]] = {}
    expected: dict[str, int] = {}
    for row in chunks:
        by_document.setdefault(row[ChunkColumn.DOC_ID], []).append(row[ChunkColumn.PART])
        expected[row[ChunkColumn.DOC_ID]] = row[ChunkColumn.PARTS]
    incomplete = {
        doc_id: f"{len(set(parts))} of {expected[doc_id]}"
        for doc_id, parts in by_document.items()
        if sorted(set(parts)) != list(range(expected[doc_id]))
    }
    ids = [row[ChunkColumn.ID] for row in chunks]
    reported = re.search(r"the index holds (\d+) documents, (\d+) chunks, (\d+) sentences", summary_line)
    return {
        "build summary": summary_line,
        "documents reported by the build": int(reported.group(1)) if reported else None,
        "documents `list` shows": len(json.loads(listed.stdout)) if listed.returncode == 0 else listed.stderr.strip(),
        "documents in the chunks table": len(by_document),
        "chunks": len(chunks),
        "chunks expected (sum of each document's parts)": sum(expected.values()),
        "documents missing chunks": len(incomplete),
        "examples": dict(sorted(incomplete.items())[:5]),
        "duplicate chunk ids": len(ids) - len(set(ids)),
        "documents rows": len(documents),
        "sentences stored": sentences,
        "sentences the documents rows count": sum(row[DocumentColumn.SENTENCES] for row in documents),
    }


def summary_of(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("added ")]
    return lines[-1] if lines else result.stderr.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--revision", help="build with the indexer of this git commit")
    parser.add_argument("--index", type=Path, help="where to build (default: a temporary folder)")
    parser.add_argument("--write-batch", type=int, help="passed to arag-index build")
    parser.add_argument("--sync", action="store_true", help="then sync the index with this checkout's arag-index")
    args = parser.parse_args(argv)
    packages = packages_at(args.revision) if args.revision else None
    index = args.index or Path(tempfile.mkdtemp(prefix="arag-completeness-")) / "idx"
    batch = ["--write-batch", str(args.write_batch)] if args.write_batch else []
    built = indexer(["build", *map(str, args.folders), "--index", str(index), "--rebuild", "--quiet", *batch], packages)
    if built.returncode != 0:
        print(built.stderr, file=sys.stderr)
        return 1
    print(
        json.dumps(
            {"indexer": args.revision or "this checkout", **report(index, summary_of(built), packages)}, indent=1
        )
    )
    if args.sync:
        synced = indexer(["sync", "--index", str(index), "--quiet"], None)
        warnings = [line for line in synced.stderr.splitlines() if "written in part" in line]
        print(
            json.dumps({"after sync with this checkout": warnings, **report(index, summary_of(synced), None)}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
