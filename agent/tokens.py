"""Token counts for retrieved text and the context budget.

Counted with the packaged embedding model's WordPiece tokenizer (all-MiniLM-L6-v2's `tokenizer.json`,
shipped inside arag-mcp as package data): it needs no download, and it is close to (a little above)
what GPT-style BPE tokenizers give for English prose.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files

from tokenizers import Tokenizer

TOKENIZER = files("arag_mcp.indexer.embedding") / "default_model" / "tokenizer.json"
"""A data file of the package, read without importing the indexer's code."""


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(texts: Sequence[str]) -> int:
    """Total tokens of `texts`, without special tokens."""
    texts = [text for text in texts if text]
    if not texts:
        return 0
    return sum(len(encoding.ids) for encoding in _tokenizer().encode_batch(texts, add_special_tokens=False))
