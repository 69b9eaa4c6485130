"""The ONNX Runtime side of an encoder folder: tokenise, run the transformer, pool and normalise.

An encoder folder holds `model.onnx` (the transformer, returning `last_hidden_state`), the
`tokenizer.json` and a `recipe.json` (inputs, pooling, window, prompts), so embedding needs only
onnxruntime and tokenizers. `onnx_export.py` makes such folders; an index carries the one it was
embedded with.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .encoder import RecipeEncoder

ENCODER_FILES = ("model.onnx", "tokenizer.json", "recipe.json")
"""What an encoder folder holds."""


class OnnxEncoder(RecipeEncoder):
    """Tokenise, run the exported transformer, pool and normalise: sentence-transformers' pipeline."""

    def __init__(self, folder: Path, threads: int | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.recipe = json.loads((folder / "recipe.json").read_text())
        self.counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.counter.no_truncation()
        self.counter.no_padding()
        self.batcher = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.batcher.enable_truncation(self.recipe["max_tokens"])
        self.batcher.enable_padding(direction="right", pad_id=self.recipe["pad_id"])
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # Idle threads sleep instead of spinning: a spinning pool holds the cores the server's
        # vector search needs right after a query is embedded (and other processes need meanwhile).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(encoding.ids) for encoding in self.counter.encode_batch(list(texts), add_special_tokens=False)]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [tuple(span) for span in self.counter.encode(text, add_special_tokens=False).offsets]

    def encode(self, texts: Sequence[str], prompt: str, batch_size: int = 32) -> np.ndarray:
        """L2-normalised float32 vectors of `texts`, longest first in batches as sentence-transformers does."""
        prepared = [prompt + text.strip() for text in texts]
        if self.recipe["lowercase"]:
            prepared = [text.lower() for text in prepared]
        vectors = np.empty((len(prepared), self.recipe["dimension"]), dtype=np.float32)
        order = np.argsort([-len(text) for text in prepared], kind="stable")
        for first in range(0, len(order), batch_size):
            rows = order[first : first + batch_size]
            vectors[rows] = self._embed_batch([prepared[row] for row in rows])
        return vectors

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.batcher.encode_batch(texts)
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        feed = {name: np.asarray(columns[name], dtype=np.int64) for name in self.recipe["inputs"]}
        hidden = self.session.run(None, feed)[0]
        mask = np.asarray(columns["attention_mask"], dtype=np.float32)[..., None]
        pooled = _pool(self.recipe["pooling"], hidden, mask)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def _pool(mode: str, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    if mode == "mean":
        return (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    if mode == "cls":
        return hidden[:, 0].copy()
    if mode == "lasttoken":
        last = mask[..., 0].sum(axis=1).astype(np.int64) - 1
        return hidden[np.arange(len(hidden)), last].copy()
    return np.where(mask > 0, hidden, -1e9).max(axis=1)
