"""What the fastest BM25 engines take to rank the same chunks as keyword_search: the anchors its speed is read against.

- ``bm25s``: the bm25s package, BM25 with our K1 and B over its own regex words (lower-cased, no
  stop words, no stemming), with its NumPy backend and, where numba is installed, its numba one
  (single-threaded, as keyword_search is).
- ``lancedb_fts``: LanceDB's native full-text index (the engine our index is stored in): simple
  tokenizer, lower-cased, ASCII-folded, no stemming, no stop words, no positions.

Each indexes a chunk's title and text as one field ("title\\ntext", one length), as our BM25
counts the title as a line of the chunk, and is asked the keywords as one bag of words: ranking
only. What they do not do that keyword_search does: keywords of several words as phrases (each
word counts alone), per-keyword chunk counts, the pages a keyword names ranked first and every
keyword's best chunk kept, matched sentences, the paper's substring mode, and words of scripts
written without spaces (Chinese, Japanese, Thai) matched inside longer runs. An anchor whose
package is not installed (`pip install -e ".[bench]"`) is left out with a note, and so is bm25s
where its tokenised corpus would not fit in the free memory (1M chunks of ~1,000 tokens: ~36 GB).

`our_ranking` is keyword_search's ranking alone (whole words, first page, no scope): the chunks it
returns, before it counts matching chunks per keyword or reads their rows and sentences.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import index_dump
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from arag_mcp.indexer import IndexSnapshot
from arag_mcp.indexer.index.keywords.search import MATCHERS, _as_written_or_by_words, _ExactTopK, _Order
from arag_mcp.indexer.index.keywords.weights import K1, B
from arag_mcp.indexer.index.ranked import top_chunks

Ranking = Callable[[Sequence[str], int], list[int]]
"""Keywords and top k to the chunk numbers ranked first, best first."""


@dataclass(frozen=True)
class Anchor:
    name: str
    ranking: Ranking
    build_s: float
    """Seconds its index took to build (LanceDB: to write the table and index it)."""


def our_ranking(snapshot: IndexSnapshot, given: Sequence[str], top_k: int) -> list[int]:
    """keyword_search(snapshot, given, top_k)'s chunk numbers in its order, computed as it computes them."""
    matcher = MATCHERS["word"]
    keywords, written = _as_written_or_by_words(snapshot, matcher, matcher.keywords(given), None)
    if not keywords:
        return []
    tally = _ExactTopK(snapshot, matcher, keywords, None, written)
    order = _Order(tally, matcher.titled_pages(snapshot, keywords, None))
    tally.settle_top(top_k)
    order.settle_named()
    ranking = order.top(top_chunks(tally.settled_scores(), tally.rank, top_k), top_k).tolist()
    bests: list[int] = []
    if top_k >= len(keywords):
        found = (order.best_of(at, None) for at in range(len(keywords)))
        bests = list(dict.fromkeys(position for position in found if position is not None))
    rest = [position for position in ranking if position not in bests][: top_k - len(bests)]
    return tally.numbers[order.sorted(np.array(bests + rest, dtype=np.int64))].tolist()


def documents(titles: Sequence[str], texts: Sequence[str]) -> list[str]:
    """What the anchors index of each chunk: its title as a line of its own, then its text."""
    return [f"{title}\n{text}" for title, text in zip(titles, texts)]


def build_anchors(titles: Sequence[str], texts: Sequence[str], folder: Path) -> tuple[list[Anchor], list[str]]:
    """Every anchor whose package is installed, indexed over these chunks (by chunk number); and a
    note for each one left out. LanceDB's table is written under `folder`, replacing what is there."""
    notes = []
    anchors: list[Anchor] = []
    needed, free = BM25S_BYTES_PER_CHAR * sum(map(len, texts)), _free_memory()
    if importlib.util.find_spec("bm25s") is None:
        notes.append('bm25s left out: not installed (pip install -e ".[bench]")')
    elif needed > free:
        notes.append(
            f"bm25s left out: its tokenised corpus needs about {needed / 2**30:.0f} GB, {free / 2**30:.0f} GB free"
        )
    else:
        backends = ["numpy"]
        if importlib.util.find_spec("numba") is None:
            notes.append('bm25s numba backend left out: numba not installed (pip install -e ".[bench]")')
        else:
            backends.append("numba")
        anchors += bm25s_anchors(documents(titles, texts), backends)
    docs = documents(titles, texts)
    anchors.append(lancedb_anchor([pa.table({"number": np.arange(len(docs)), FTS_COLUMN: docs})], folder))
    return anchors, notes


def build_anchors_from_index(snapshot: IndexSnapshot, folder: Path) -> tuple[list[Anchor], list[str]]:
    """The anchors over every chunk of `snapshot`, its texts read a batch at a time where they
    would not fit in memory held whole (1M chunks: the Python strings alone took most of 24 GB)."""
    chars = int(snapshot.catalogue.lengths.sum()) * CHARS_PER_TOKEN
    if HELD_BYTES_PER_CHAR * chars < _free_memory():
        held = index_dump.all_chunks(snapshot)
        return build_anchors([c.title for c in held], [c.text for c in held], folder)
    needed, free = BM25S_BYTES_PER_CHAR * chars, _free_memory()
    note = f"bm25s left out: its tokenised corpus needs about {needed / 2**30:.0f} GB, {free / 2**30:.0f} GB free"
    return [lancedb_anchor(_document_batches(snapshot), folder)], [note]


CHARS_PER_TOKEN = 4
"""About how many characters a token of the index's lengths stands for."""
HELD_BYTES_PER_CHAR = 6
"""About what holding every chunk (index_dump.all_chunks) and LanceDB's table of their documents
takes, per character of text: the run at 1M chunks (about 4 GB of text) was killed at 24 GB."""


def _document_batches(snapshot: IndexSnapshot, rows: int = 20_000) -> Iterator[pa.Table]:
    """What the anchors index of each chunk (`documents`), by chunk number, a batch at a time."""
    for first in range(0, snapshot.chunk_count, rows):
        numbers = np.arange(first, min(first + rows, snapshot.chunk_count))
        titles = snapshot.catalogue.titles.take(pa.array(numbers))
        _, texts = snapshot.chunks.texts_at(numbers)
        yield pa.table({"number": numbers, FTS_COLUMN: pc.binary_join_element_wise(titles, texts, "\n")})


BM25S_BYTES_PER_CHAR = 8
"""About what bm25s holds while it indexes, per character of text: its tokenisation keeps every
token id of the corpus as Python lists (a word of ~5 characters and its space: ~40 bytes)."""


def _free_memory() -> int:
    """Bytes of memory available now (Linux: MemAvailable; elsewhere, taken as unbounded)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 2**62


def bm25s_anchors(docs: list[str], backends: Sequence[str]) -> list[Anchor]:
    """One bm25s index per backend, from one tokenisation of `docs`."""
    import bm25s

    started = time.perf_counter()
    tokens = bm25s.tokenize(docs, stopwords=None, show_progress=False)
    tokenised_s = time.perf_counter() - started
    anchors = []
    for backend in backends:
        started = time.perf_counter()
        retriever = bm25s.BM25(k1=K1, b=B, backend=backend)
        retriever.index(tokens, show_progress=False)
        ranking = _bm25s_ranking(retriever)
        ranking(["warm", "up"], 1)  # numba compiles its functions on the first call
        name = "bm25s" if backend == "numpy" else f"bm25s_{backend}"
        anchors.append(Anchor(name, ranking, round(tokenised_s + time.perf_counter() - started, 1)))
    return anchors


def _bm25s_ranking(retriever) -> Ranking:
    import bm25s

    def ranking(keywords: Sequence[str], top_k: int) -> list[int]:
        words = bm25s.tokenize(" ".join(keywords), stopwords=None, show_progress=False, return_ids=False)[0]
        known = [word for word in words if word in retriever.vocab_dict]
        if not known:
            return []
        k = min(top_k, retriever.scores["num_docs"])
        numbers, scores = retriever.retrieve([known], k=k, show_progress=False, n_threads=1)
        return [int(n) for n, score in zip(numbers[0], scores[0]) if score > 0]

    return ranking


FTS_COLUMN = "document"


def lancedb_anchor(batches: Iterable[pa.Table], folder: Path) -> Anchor:
    """LanceDB's native full-text index over the documents of `batches` (their chunk `number` and
    FTS_COLUMN), in a table of its own under `folder`."""
    import lancedb
    from lancedb.index import FTS
    from lancedb.query import MatchQuery

    started = time.perf_counter()
    schema = pa.schema([pa.field("number", pa.int64()), pa.field(FTS_COLUMN, pa.string())])
    table = lancedb.connect(str(folder)).create_table("anchor", schema=schema, mode="overwrite")
    for batch in batches:
        table.add(batch.cast(schema))
    table.create_index(
        FTS_COLUMN,
        config=FTS(
            base_tokenizer="simple",
            lower_case=True,
            ascii_folding=True,
            stem=False,
            remove_stop_words=False,
            with_position=False,
        ),
    )

    def ranking(keywords: Sequence[str], top_k: int) -> list[int]:
        query = table.search(MatchQuery(" ".join(keywords), FTS_COLUMN)).limit(top_k)
        return query.select(["number", "_score"]).to_arrow()["number"].to_pylist()

    return Anchor("lancedb_fts", ranking, round(time.perf_counter() - started, 1))
