"""sentence-transformers on torch: any model it can load, on any device (the `models` extra)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .encoder import MODELS_EXTRA, ModelError
from .settings import resolve_model_path


class TorchEncoder:
    """A SentenceTransformer with the document and query prompts it defines, loaded offline when
    first used (a model name must be in the Hugging Face cache: nothing is downloaded)."""

    def __init__(self, model: str, device: str) -> None:
        self.model_name, self.device = model, device

    @cached_property
    def model(self) -> Any:
        """The SentenceTransformer; ModelError where torch is missing or the model cannot load."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging
        except ImportError:
            raise ModelError(
                f"embedding model {self.model_name!r} needs sentence-transformers and torch here (--backend torch, "
                f"a GPU --device, or a model other than BERT to export to ONNX); install them with {MODELS_EXTRA}"
            ) from None

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

    @property
    def dimension(self) -> int:
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(dimension())

    @property
    def max_tokens(self) -> int:
        return int(self.model.max_seq_length)

    def prompt(self, kind: str) -> str:
        return self.model.prompts.get(kind, "") or ""

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        encoded = self.model.tokenizer(list(texts), add_special_tokens=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of `text` (fast tokenizers only)."""
        encoded = self.model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(span) for span in encoded["offset_mapping"]]

    def encode(self, texts: Sequence[str], prompt: str, batch_size: int = 32) -> np.ndarray:
        vectors = self.model.encode(
            list(texts),
            prompt=prompt or None,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
