"""Keywords whose punctuation or capitals matter ("--table", "-O2", "C++", "pg_hba.conf",
"AbortSignal.timeout", "T-ALL", "ALL", "IT"): matched as written from the index's marked tokens,
with exact counts, in both match modes, agreeing with the brute-force definition; and folding
that stays linear in a run of combining marks."""

from __future__ import annotations

import json
import time

import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.keywords.definition import WordCorpus, keyword_ranking
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.keywords.terms import MARKED_PREFIX
from arag_mcp.indexer.index.keywords.words import fold
from arag_mcp.indexer.index.snapshot import IndexSnapshot, open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.indexer.normal_forms import GRAPHEME_JOINER, normalized, stream_safe
from arag_mcp.server.search.snippets import keyword_spans
from index_dump import all_chunks

from ..conftest import HASHED_MODEL
from .keyword_counts import occurrences

DOCUMENTS = [
    ("pgdump", "pg_dump", "Use pg_dump --table to dump one table. The --schema flag selects schemas."),
    ("furniture", "Furniture", "The table and chairs stand in the hall. A table-top is flat."),
    ("gcc", "GCC", "Compile with -O2 for speed; -O0 turns optimisation off. C++ and C# differ. See C++17."),
    ("sensor", "Cars", "The O2 sensor failed on the car."),
    ("tall", "T-ALL", "T-ALL is a form of ALL (acute lymphoblastic leukaemia). ALL patients relapse."),
    ("everyday", "Everyday", "All of the cells are all right. It is what it is, all day."),
    ("offices", "Offices", "The IT department fixed the network."),
    ("cpp", "C++", "A language with templates."),
    ("node", "Node", "AbortSignal.timeout(ms) returns a signal. See also AbortSignal and timeout settings."),
    ("postgres", "Postgres", "Edit pg_hba.conf, then reload. The hba conf file is read at start."),
    ("pandemic", "Pandemic", "COVID 19 spread in 2020."),
    ("books", "Books", "It’s O’Brien’s book – a long one."),
]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> IndexSnapshot:
    folder = tmp_path_factory.mktemp("marked")
    with (folder / "docs.jsonl").open("w", encoding="utf-8") as handle:
        for doc_id, title, text in DOCUMENTS:
            handle.write(json.dumps({"id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
    Index(str(folder / "idx")).add([folder / "docs.jsonl"], BuildOptions(model=HASHED_MODEL, progress=False))
    return open_index(str(folder / "idx"))


def titles(snapshot: IndexSnapshot, keywords: list[str], match: str = "word") -> list[str]:
    return [hit.chunk.title for hit in keyword_search(snapshot, keywords, 10, match).hits]


def test_the_index_holds_marked_tokens_as_written(snapshot):
    [part] = snapshot.keywords.parts
    tokens = {term[len(MARKED_PREFIX) :] for term in part.words[: part.token_count].to_pylist()}
    assert {"--table", "-O2", "C++", "C++17", "pg_hba.conf", "T-ALL", "ALL", "IT", "AbortSignal.timeout(ms"} <= tokens
    assert "table" not in tokens and "All" not in tokens  # plain words are words only; a closing bracket is stripped
    assert all(not word.startswith(MARKED_PREFIX) for word in part.words[part.token_count :].to_pylist())


@pytest.mark.parametrize(
    ("keyword", "expected"),
    [
        ("--table", ["pg_dump"]),
        ("-O2", ["GCC"]),
        ("pg_hba.conf", ["Postgres"]),
        ("AbortSignal.timeout", ["Node"]),
        ("T-ALL", ["T-ALL"]),
        ("IT", ["Offices"]),
        ("O'Brien's", ["Books"]),  # typeset apostrophes are apostrophes
    ],
)
def test_a_marked_keyword_matches_only_where_the_text_has_it_as_written(snapshot, keyword, expected):
    assert titles(snapshot, [keyword]) == expected


def test_counts_are_exact(snapshot):
    assert occurrences(snapshot, "T-ALL") == {"T-ALL": 2}  # title and text
    assert occurrences(snapshot, "ALL") == {"T-ALL": 4}  # "T-ALL" twice, "ALL" twice; never "All" or "all"
    assert occurrences(snapshot, "C++") == {"C++": 1, "GCC": 2}  # "C++17" holds it; "C#" does not
    found = keyword_search(snapshot, ["T-ALL", "--table"], 5)
    assert [(count.at_least, count.at_most) for count in found.per_keyword] == [(1, 1), (1, 1)]


def test_an_acronym_is_not_the_common_word(snapshot):
    assert titles(snapshot, ["ALL"]) == ["T-ALL"]
    assert set(titles(snapshot, ["all"])) == {"T-ALL", "Everyday"}  # a word in small letters: any case
    assert set(titles(snapshot, ["it"])) == {"Everyday", "Offices", "Books"}


def test_the_page_a_marked_keyword_names_ranks_first(snapshot):
    assert titles(snapshot, ["C++"]) == ["C++", "GCC"]
    assert titles(snapshot, ["T-ALL"]) == ["T-ALL"]


def test_a_keyword_no_text_has_as_written_matches_its_words(snapshot):
    assert titles(snapshot, ["covid-19"]) == ["Pandemic"]
    assert titles(snapshot, ["HBA"]) == ["Postgres"]  # no "HBA" in capitals: the word "hba"


def test_substring_mode_counts_punctuated_keywords_from_the_tokens(snapshot):
    found = keyword_search(snapshot, ["--table", "c++"], 5, "substring")
    assert [(hit.chunk.title, hit.score) for hit in found.hits] == [("pg_dump", 7), ("GCC", 6)]
    assert [(count.at_least, count.at_most) for count in found.per_keyword] == [(1, 1), (1, 1)]


def test_snippets_show_the_sentence_with_the_keyword(snapshot):
    [hit] = keyword_search(snapshot, ["AbortSignal.timeout"], 5).hits
    assert hit.matched == ["AbortSignal.timeout(ms) returns a signal."]
    sentence = "Flags such as --table, -O2 and --schema."
    assert [sentence[a:b] for a, b in keyword_spans(sentence, ["--table", "-O2"], "word")] == ["--table", "-O2"]


KEYWORD_SETS = [
    ["--table"], ["-O2"], ["C++"], ["C#"], ["ALL"], ["all"], ["T-ALL"], ["IT"], ["it"], ["pg_hba.conf"],
    ["AbortSignal.timeout"], ["AbortSignal"], ["covid-19"], ["O'Brien's"], ["HBA"], ["C++", "templates"],
    ["ALL", "all", "T-ALL"], ["table", "--table"], ["conf", "pg_hba.conf", "hba"],
]  # fmt: skip


@pytest.mark.parametrize("top_k", [1, 3, 10])
def test_marked_keywords_agree_with_brute_force(snapshot, top_k):
    chunks = all_chunks(snapshot)
    ids, texts = [c.chunk_id for c in chunks], [c.text for c in chunks]
    corpus = WordCorpus(ids, [c.title for c in chunks], texts, [c.tokens for c in chunks])
    for keywords in KEYWORD_SETS:
        words = keyword_search(snapshot, keywords, top_k, "word").hits
        assert [(hit.chunk.chunk_id, hit.score) for hit in words] == corpus.ranking(keywords, top_k), keywords
        paper = keyword_search(snapshot, keywords, top_k, "substring").hits
        assert [(hit.chunk.chunk_id, hit.score) for hit in paper] == keyword_ranking(ids, texts, keywords, top_k)


def test_runs_of_combining_marks_fold_in_linear_time():
    """CPython orders marks by class in quadratic time: 40,000 alternating marks took minutes before
    normalising kept runs to 30 (Unicode's stream-safe form)."""
    marks = "\uff9e\u0316" * 20_000 + "\u0301\u0316" * 20_000  # half-width voicing marks and accents
    started = time.perf_counter()
    folded = fold("ｶ" + marks)
    composed = normalized("NFC", "e" + marks)
    assert time.perf_counter() - started < 30  # a guard against a hang: quadratic work here takes minutes
    assert folded.startswith("ガ") and composed.startswith("e")
    assert stream_safe("e" + "\u0301" * 31) == "e" + "\u0301" * 30 + GRAPHEME_JOINER + "\u0301"
    assert stream_safe("café naïve") == "café naïve"
