"""Encoder rate: how close a build's embedding comes to the raw encoder on the same texts.

    python bench/encoder_rate.py                      # 4,096 MuSiQue sentences (one write batch), 3 rounds
    python bench/encoder_rate.py --sentences 16384 --rounds 2

The MuSiQue passages are chunked as a build chunks them and queued into one write batch
(rows.queue_document). Each round then times, in turn on the same texts:
- raw: the encoder called once on every text (onnx_runtime sorts them by length once);
- sliced: the texts embedded 256 at a time, each slice sorted on its own (how builds embedded a
  write batch before it was sorted as a whole);
- build: rows.embedded_rows, what a build runs for a write batch.
Prints each one's sentences/s and its ratio to raw (median of the rounds); results go to
bench/results/encoder_rate.json.
"""

from __future__ import annotations

import argparse
import statistics
import time

from arag_mcp.indexer import Embedder
from arag_mcp.indexer.rows import (
    EMBED_SLICE_BATCHES,
    RowBatch,
    chunk_document,
    content_hash,
    embedded_rows,
    queue_document,
)
from arag_mcp.indexer.sources.document import Document
from common import BENCH_DATA, RESULTS, log, read_jsonl, write_json

OUTPUT = RESULTS / "encoder_rate.json"


def queued(embedder: Embedder, sentences: int) -> RowBatch:
    """A write batch of MuSiQue passages holding at least `sentences` sentences."""
    batch = RowBatch()
    for number, record in enumerate(read_jsonl(BENCH_DATA / "musique" / "corpus.jsonl")):
        document = Document(
            doc_id=f"p{number}", title=record["title"], text=record["text"], source="musique", file_type="txt"
        )
        for _ in queue_document(batch, document, content_hash(document), chunk_document(document, embedder, 1000)):
            pass
        if len(batch.sentences) >= sentences:
            break
    return batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    embedder = Embedder().load()
    batch = queued(embedder, args.sentences)
    texts = batch.embed_texts
    log(f"{len(texts)} sentences queued")
    step = args.batch_size * EMBED_SLICE_BATCHES

    def raw() -> None:
        embedder.encode_documents(texts, batch_size=args.batch_size)

    def sliced() -> None:
        for first in range(0, len(texts), step):
            embedder.encode_documents(texts[first : first + step], batch_size=args.batch_size)

    def build() -> None:
        embedded_rows(embedder, batch, args.batch_size)

    ways = {"raw": raw, "sliced": sliced, "build": build}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    results: dict = {"sentences": len(texts), "batch_size": args.batch_size}
    for round_number in range(args.rounds):
        for name, way in ways.items():
            started = time.perf_counter()
            way()
            seconds[name].append(time.perf_counter() - started)
            log(f"round {round_number + 1} {name}: {seconds[name][-1]:.2f} s")
        medians = {name: statistics.median(times) for name, times in seconds.items()}
        results["ways"] = {
            name: {
                "seconds": round(medians[name], 3),
                "sentences_per_second": round(len(texts) / medians[name], 1),
                "ratio_to_raw": round(medians["raw"] / medians[name], 3),
            }
            for name in ways
        }
        write_json(OUTPUT, results)
    for name, figures in results["ways"].items():
        print(f"{name:7} {figures['sentences_per_second']:8.1f} sentences/s  {figures['ratio_to_raw']:.3f}x raw")


if __name__ == "__main__":
    main()
