"""What each `arag-index` command does, once cli.py has parsed its arguments, and the exit status
each failure gives (cli.py's docstring lists them)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace

from arag_mcp.indexer.embedding.encoder import ModelError
from arag_mcp.indexer.embedding.settings import limit_cpu_threads
from arag_mcp.indexer.index.errors import IndexBusy, IndexStoreError
from arag_mcp.indexer.index.schema import DocumentColumn
from arag_mcp.indexer.index.snapshot import checked_index, list_documents
from arag_mcp.indexer.sources.budget import MB, FileBudget
from arag_mcp.indexer.sources.document import CorpusError
from arag_mcp.indexer.sources.formats import TYPES_READ

from .build_options import BuildOptions, WatchOptions
from .build_summary import BuildFailed, BuildSummary, report_skips
from .command_options import terminal_text
from .indexes import Index
from .watch import WatcherRunning

log = logging.getLogger("arag_mcp.indexer")


def build_options(args: argparse.Namespace) -> BuildOptions:
    """Build options from the command line; model, backend and chunk size not given are the index's
    own (settled by the command, from the manifest it reads under the index's lock)."""
    given = {
        name: value
        for name, value in (
            ("model", getattr(args, "model", None)),
            ("backend", getattr(args, "backend", None)),
            ("chunk_tokens", getattr(args, "chunk_tokens", None)),
            ("batch_size", args.batch_size),
            ("flush_sentences", args.write_batch),
            ("commit_sentences", args.commit_every),
        )
        if value is not None
    }
    rebuild = getattr(args, "rebuild", False)
    return replace(
        BuildOptions(),
        **given,
        device=args.device,
        commit_seconds=args.commit_seconds,
        exclude=tuple(getattr(args, "exclude", ())),
        include=tuple(getattr(args, "include", ())),
        follow_links=getattr(args, "follow_links", False),
        gitignore=not getattr(args, "no_gitignore", False),
        strict=getattr(args, "strict", False),
        rebuild=rebuild,
        progress=not getattr(args, "quiet", True),
        ray=getattr(args, "ray", None),
        file_budget=FileBudget(args.file_seconds, args.file_memory * MB),
    )


def run_update(args: argparse.Namespace) -> None:
    limit_cpu_threads(args.threads)
    options = build_options(args)
    index = Index(args.index)
    summary = index.sync(options) if args.command == "sync" else index.add(args.sources, options)
    _report(summary)
    if not summary.documents:
        _nothing_indexed(args, summary)


def _nothing_indexed(args: argparse.Namespace, summary: BuildSummary) -> None:
    """An index left with no documents is said so; where this command read none (an empty folder,
    or every file skipped), it fails: a server of it would find nothing."""
    if args.command == "sync":
        log.warning(
            "arag-index: warning: %s holds no documents; add files of a supported type (it reads %s)",
            args.index,
            TYPES_READ,
        )
        return
    count = sum(item.counted for item in summary.skipped)
    skipped = f" ({count} skipped, listed above)" if count else ""
    raise CorpusError(
        f"no documents found in {', '.join(map(str, args.sources))}{skipped}; arag-index reads {TYPES_READ}: "
        "add some, or name other text files with --include, and run the command again (the index is kept, empty)"
    )


def _report(summary: BuildSummary) -> None:
    report_skips(summary)
    log.info("%s", summary.describe())


def run_watch(args: argparse.Namespace) -> None:
    limit_cpu_threads(args.threads)
    options = build_options(args)
    watching = WatchOptions(options, args.reconcile_every, args.poll, args.parent_pid)
    Index(args.index).watch(args.sources, watching)


def run_remove(args: argparse.Namespace) -> None:
    _report(Index(args.index).remove(args.targets))


def run_list(args: argparse.Namespace) -> None:
    documents = list_documents(args.index)
    if args.json:
        print(terminal_text(json.dumps(documents, indent=2, ensure_ascii=False)))
        return
    for document in documents:
        fields = (
            document[DocumentColumn.SOURCE],
            document[DocumentColumn.TITLE],
            f"{document[DocumentColumn.CHUNKS]} chunks",
            document[DocumentColumn.INDEXED_AT],
            document[DocumentColumn.ID],
        )
        print("\t".join(terminal_text(str(value), keep="") for value in fields))
    print(f"{len(documents)} documents", file=sys.stderr)


def run_info(args: argparse.Namespace) -> None:
    snapshot = checked_index(args.index)
    print(json.dumps({"index": snapshot.uri, **snapshot.manifest.to_dict()}, indent=2, sort_keys=True))


def run_describe(args: argparse.Namespace) -> None:
    index = Index(args.index)
    manifest = index.describe(args.text) if args.text is not None else index.committed()
    given = "described" if manifest.described_as else "derived; set one with `arag-index describe`"
    print(manifest.description)
    print(f"({given})", file=sys.stderr)


COMMANDS = {
    "add": run_update,
    "build": run_update,
    "sync": run_update,
    "watch": run_watch,
    "remove": run_remove,
    "list": run_list,
    "info": run_info,
    "describe": run_describe,
}


def run(args: argparse.Namespace) -> int:
    """Run the command `args` name; its exit status."""
    try:
        COMMANDS[args.command](args)
    except WatcherRunning as exc:
        print(f"arag-index: {exc}", file=sys.stderr)
        return 3
    except (BuildFailed, IndexBusy) as exc:
        print(f"arag-index: error: {exc}", file=sys.stderr)
        return 1
    except (CorpusError, IndexStoreError, ModelError) as exc:
        print(f"arag-index: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"arag-index: error: {exc.strerror or exc}: {exc.filename or args.index}; check the path and its permissions",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print("arag-index: interrupted; the index keeps what was committed before", file=sys.stderr)
        return 130
    return 0
