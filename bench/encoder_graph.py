"""The default model's ONNX graph written from its weights (bert_graph.py) against the graph torch
traces from the same model: embedding rate, timed in turn on the same sentences, and how far their
vectors are apart. Needs the `models` extra (torch) for the traced graph.

    python bench/encoder_graph.py [--sentences 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from arag_mcp.indexer import Embedder  # noqa: E402
from arag_mcp.indexer.embedding.bert_graph import write_bert_graph
from arag_mcp.indexer.embedding.onnx_export import _model_recipe, _trace
from arag_mcp.indexer.embedding.onnx_runtime import OnnxEncoder
from arag_mcp.indexer.embedding.settings import DEFAULT_MODEL_DIR
from arag_mcp.indexer.text.sentences import split_sentences
from common import BENCH_DATA, read_jsonl


def musique_sentences(count: int) -> list[str]:
    sentences: list[str] = []
    for record in read_jsonl(BENCH_DATA / "musique" / "corpus.jsonl"):
        sentences += [record["text"][start:end] for start, end in split_sentences(record["text"])]
        if len(sentences) >= count:
            return sentences[:count]
    return sentences


def encoder_folders(work: Path) -> dict[str, Path]:
    """Both graphs, each in an encoder folder with the same tokenizer and recipe."""
    model = Embedder(backend="torch").load()._model
    recipe = _model_recipe(model)
    folders = {"written": work / "written", "traced": work / "traced"}
    for name, folder in folders.items():
        folder.mkdir()
        shutil.copyfile(DEFAULT_MODEL_DIR / "tokenizer.json", folder / "tokenizer.json")
        (folder / "recipe.json").write_text(json.dumps(recipe))
    write_bert_graph(DEFAULT_MODEL_DIR, folders["written"] / "model.onnx")
    _trace(model, folders["traced"] / "model.onnx", recipe["inputs"])
    return folders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not (BENCH_DATA / "musique").exists():
        print(f"no benchmark data at {BENCH_DATA}", file=sys.stderr)
        return 2
    sentences = musique_sentences(args.sentences)
    with tempfile.TemporaryDirectory() as work:
        encoders = {name: OnnxEncoder(folder) for name, folder in encoder_folders(Path(work)).items()}
        rates: dict[str, list[float]] = {name: [] for name in encoders}
        vectors: dict[str, np.ndarray] = {}
        for round_ in range(args.rounds):
            order = list(encoders) if round_ % 2 == 0 else list(reversed(encoders))
            for name in order:
                started = time.perf_counter()
                vectors[name] = encoders[name].encode(sentences, "")
                rates[name].append(len(sentences) / (time.perf_counter() - started))
    result = {
        "sentences": len(sentences),
        "sentences_per_s": {name: [round(rate, 1) for rate in values] for name, values in rates.items()},
        "median_ratio_written_to_traced": round(float(np.median(rates["written"]) / np.median(rates["traced"])), 3),
        "max_abs_difference": float(np.max(np.abs(vectors["written"] - vectors["traced"]))),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
