"""What a one-query vector search (semantic_search, naive_embedding_search) sends: a page of its
ranking in places the conversation has not seen, each result as its whole chunk or its matched
sentences."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .sending import deliveries, sent_snippets
from .snippets import leading
from .unseen import UnseenPage, unseen_page

if TYPE_CHECKING:
    import numpy as np
    from arag_mcp.indexer.index.ranked import Hit
    from arag_mcp.indexer.index.snapshot import IndexSnapshot

    from .conversations import Delivery
    from .search_calls import SearchCall
    from .snippets import Snippet


@dataclass(frozen=True)
class VectorResults:
    page: UnseenPage
    deliveries: list[Delivery] | None
    """Whole chunks, where the tool or the profile's searches send them."""
    snippets: list[Snippet]


def vector_results_for(
    call: SearchCall,
    tool: str,
    ranking: Callable[[IndexSnapshot, np.ndarray, int, np.ndarray | None], list[Hit]],
    vector: np.ndarray,
    top_k: int,
    offset: int,
    whole_chunks: bool,
    full_text: bool,
) -> VectorResults:
    """`tool`'s page of `ranking` for the query `vector` (unseen.py); `whole_chunks`: the tool always
    sends whole chunks (and passes over those the conversation has), `full_text`: the profile's
    searches do."""
    page = unseen_page(call, ranking, vector, top_k, offset, whole_chunks)
    sent = deliveries(call, tool, page.hits) if whole_chunks or full_text else None
    snippets = sent_snippets(call, tool, page.hits, [leading] * len(page.hits), sent is not None)
    return VectorResults(page, sent, snippets)
