"""`arag-index`: build, update and describe an index."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from .embedding import BACKENDS, DEFAULT_BACKEND, DEFAULT_MODEL, ModelError, limit_cpu_threads
from .manifest import IndexStoreError
from .readers import CorpusError

log = logging.getLogger("arag_mcp.indexer")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="arag-index", description="Build and inspect arag-mcp indexes.")
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser("build", help="index files and folders (updates an existing index incrementally)")
    build.add_argument(
        "sources", nargs="+", metavar="SOURCE", help="files or folders (.txt .md .rst .html .json .jsonl .pdf)"
    )
    build.add_argument(
        "--index", required=True, metavar="DIR", help="index folder or object-store URI (s3://, gs://, az://)"
    )
    build.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"sentence-transformers model name or path (default: {DEFAULT_MODEL}, bundled)",
    )
    build.add_argument("--device", default=None, help="torch device for embedding, e.g. cpu, cuda, mps (default: cpu)")
    build.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help=f"how sentences are embedded on the CPU: ONNX Runtime fp32 or int8 (exported once, cached), "
        f"or sentence-transformers on torch (default: {DEFAULT_BACKEND}; other devices use torch)",
    )
    build.add_argument(
        "--batch-size", type=_positive_int, default=32, help="sentences per embedding batch (default: 32)"
    )
    build.add_argument(
        "--chunk-tokens", type=_positive_int, default=1000, help="target tokens per chunk (default: 1000)"
    )
    build.add_argument(
        "--write-batch",
        type=_positive_int,
        default=4096,
        metavar="SENTENCES",
        help="sentences embedded per write to the index; bounds memory (default: 4096)",
    )
    build.add_argument(
        "--threads", type=_positive_int, default=None, help="CPU threads for embedding (default: up to 4)"
    )
    build.add_argument("--rebuild", action="store_true", help="start over instead of updating the existing index")
    build.add_argument("--quiet", action="store_true", help="no progress bar")

    info = commands.add_parser("info", help="print an index's manifest and counts")
    info.add_argument("--index", required=True, metavar="DIR", help="index folder or object-store URI")
    return parser.parse_args(argv)


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value!r}")
    return number


def run_build(args: argparse.Namespace) -> None:
    limit_cpu_threads(args.threads)
    from .build import BuildOptions, build_index

    options = BuildOptions(
        model=args.model,
        device=args.device,
        backend=args.backend,
        batch_size=args.batch_size,
        chunk_tokens=args.chunk_tokens,
        rebuild=args.rebuild,
        flush_sentences=args.write_batch,
        progress=not args.quiet,
    )
    summary = build_index(args.sources, args.index, options)
    if summary.skipped:
        listing = "; ".join(f"{item.path} ({item.reason})" for item in summary.skipped)
        log.warning("skipped %d file(s): %s", len(summary.skipped), listing)
    log.info(
        "indexed %d documents (%d new or changed, %d unchanged, %d removed): %d chunks, %d sentences; "
        "embedded %d sentences in %.1f s (%.0f sentences/s)",
        summary.documents,
        summary.embedded_documents,
        summary.unchanged_documents,
        summary.deleted_documents,
        summary.chunks,
        summary.sentences,
        summary.embedded_sentences,
        summary.seconds,
        summary.sentences_per_second,
    )


def run_info(args: argparse.Namespace) -> None:
    from .reader import open_index

    snapshot = open_index(args.index)
    print(json.dumps({"index": snapshot.uri, **snapshot.manifest.raw}, indent=2, sort_keys=True))


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    args = parse_args(argv)
    try:
        if args.command == "build":
            run_build(args)
        else:
            run_info(args)
    except (CorpusError, IndexStoreError, ModelError) as exc:
        print(f"arag-index: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"arag-index: error: {exc.strerror or exc}: {exc.filename or args.index}; check the path and its permissions",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("arag-index: interrupted; the index is as it was before this build", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
