"""Keywords as names: the page a keyword names ranks first, whatever its length (a chunk titled as
the keyword, then one titled "keyword (qualifier)", then chunks that only mention it); a full title
of up to 16 words is one keyword; "&" and "and" match each other. Small real texts in a real index,
checked against the keyword engine's definition (definition.py), and through the tool."""

from __future__ import annotations

import json

import index_dump
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.keywords.definition import WordCorpus, keyword_ranking
from arag_mcp.indexer.index.keywords.search import keyword_search
from arag_mcp.indexer.index.snapshot import IndexSnapshot, open_index
from arag_mcp.indexer.indexes import Index
from arag_mcp.server.app import create_server
from arag_mcp.server.search.limits import MAX_KEYWORD_WORDS
from arag_mcp.server.tools.profiles import PROFILES
from mcp import Client

from ..conftest import HASHED_MODEL, live_index

BIOGRAPHY = "Tim Burstall was an English-born Australian film director, writer and producer. " + " ".join(
    f"In his {year}s work he studied the craft of cinema in Melbourne and made documentaries for the state."
    for year in range(1950, 1990, 2)
)
PAGES = [
    ("Tim Burstall", BIOGRAPHY),
    ("Stork (film)", "Stork is a 1971 comedy directed by Tim Burstall."),
    ("Alvin Purple", "Alvin Purple is a 1973 film directed by Tim Burstall."),
    ("Petersen (film)", "Petersen is a 1974 film by Tim Burstall, with Jack Thompson."),
    ("The Trail of the Lonesome Pine (song)", "A 1913 song. " + "It was a hit of its year and sold many copies. " * 12),
    ("The Trail of the Lonesome Pine (1936 film)", "The Trail of the Lonesome Pine is a 1936 film."),
    ("Way Out West", "The Trail of the Lonesome Pine is sung in Way Out West. The Trail of the Lonesome Pine!"),
    ("Atlanta", "Atlanta is the capital of Georgia. Georgia's largest city. Georgia, Georgia, Georgia."),
    ("Georgia (U.S. state)", "A state in the Southeast. " + "Its farms grow peanuts and peaches for the nation. " * 10),
    ("Savannah", "Savannah is the oldest city in Georgia, and Georgia's first capital."),
    ("Thomas H. Ince (film)", "A short film about Thomas H. Ince."),
    ("Thomas H. Ince", "An American producer. " + "He built studios and ran them for many years with care. " * 15),
    ("Ince Studios", "Thomas H. Ince founded Ince Studios; Thomas H. Ince ran it."),
    ("Thelma & Louise", "Thelma & Louise is a 1991 road film."),
    ("Geena Davis", "Geena Davis starred in Thelma and Louise and won an Oscar for another film."),
    ("The Covenant, The Sword, and the Arm of the Lord", "A militia group in Arkansas, founded in 1971."),
    ("Arkansas militias", "The Covenant, the Sword, and the Arm of the Lord was raided in 1985."),
    ("FA Cup", "The FA Cup is a knockout cup. " + "The FA Cup final is played at Wembley each May. " * 8),
    ("FA Cup (women)", "The Women's FA Cup is the FA Cup of women's football."),
    ("1959 final", "Nottingham Forest beat Luton Town in the 1959 FA Cup Final at Wembley."),
    ("Brian Clough", "Brian Clough managed Nottingham Forest for eighteen years."),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("named")
    corpus = folder / "pages.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"p{at}", "title": t, "text": x}) + "\n" for at, (t, x) in enumerate(PAGES))
    )
    Index(str(folder / "idx")).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
    return str(folder / "idx")


@pytest.fixture(scope="module")
def snapshot(index: str) -> IndexSnapshot:
    return open_index(index)


def titles(snapshot: IndexSnapshot, keywords: list[str], top_k: int = 5, match: str = "word") -> list[str]:
    return [hit.chunk.title for hit in keyword_search(snapshot, keywords, top_k, match).hits]


def test_the_biography_outranks_short_pages_that_mention_the_name(snapshot: IndexSnapshot):
    hits = keyword_search(snapshot, ["Tim Burstall"], 5).hits
    assert [hit.chunk.title for hit in hits][0] == "Tim Burstall"
    assert hits[0].score < hits[1].score  # BM25 alone would put the short pages first


def test_a_qualified_page_outranks_pages_that_only_mention_it(snapshot: IndexSnapshot):
    found = titles(snapshot, ["The Trail of the Lonesome Pine"], 3)
    assert set(found[:2]) == {"The Trail of the Lonesome Pine (song)", "The Trail of the Lonesome Pine (1936 film)"}
    assert found[2] == "Way Out West"


def test_the_exact_title_comes_before_the_qualified_one(snapshot: IndexSnapshot):
    assert titles(snapshot, ["Thomas H. Ince"], 3) == ["Thomas H. Ince", "Thomas H. Ince (film)", "Ince Studios"]


def test_each_keyword_keeps_its_own_page(snapshot: IndexSnapshot):
    """ "Georgia" is said most on other pages; its "(U.S. state)" page is still its best chunk."""
    assert set(titles(snapshot, ["Atlanta", "Georgia"], 2)) == {"Atlanta", "Georgia (U.S. state)"}
    assert titles(snapshot, ["Georgia"], 1) == ["Georgia (U.S. state)"]


def test_a_page_named_by_one_keyword_does_not_outrank_a_chunk_matching_more_of_them(snapshot: IndexSnapshot):
    """The FA Cup pages name a keyword, but the final matches both: it comes first; the "FA Cup" page
    keeps that keyword's place among the results."""
    found = titles(snapshot, ["Nottingham Forest", "FA Cup"], 3)
    assert found[0] == "1959 final" and "FA Cup" in found, found
    assert titles(snapshot, ["FA Cup"], 1) == ["FA Cup"]  # one keyword: its page first, as before


def test_substring_mode_keeps_the_papers_scoring(snapshot: IndexSnapshot):
    chunks = index_dump.all_chunks(snapshot)
    ids, texts = [c.chunk_id for c in chunks], [c.text for c in chunks]
    got = [
        (hit.chunk.chunk_id, int(hit.score)) for hit in keyword_search(snapshot, ["Tim Burstall"], 3, "substring").hits
    ]
    assert got == keyword_ranking(ids, texts, ["Tim Burstall"], 3)
    assert titles(snapshot, ["Tim Burstall"], 1, "substring") != ["Tim Burstall"]  # the paper's: a short page first


def test_the_ranking_is_the_brute_force_definition(snapshot: IndexSnapshot):
    chunks = index_dump.all_chunks(snapshot)
    corpus = WordCorpus(
        [c.chunk_id for c in chunks], [c.title for c in chunks], [c.text for c in chunks], [c.tokens for c in chunks]
    )
    for keywords in (
        ["Tim Burstall"],
        ["Georgia"],
        ["Atlanta", "Georgia"],
        ["Thomas H. Ince", "film"],
        ["The Trail of the Lonesome Pine", "song"],
        ["Ince"],
        ["film", "Georgia", "Tim Burstall"],
        ["Thelma and Louise"],
        ["Thelma & Louise", "Geena Davis"],
        ["The Covenant, The Sword, and the Arm of the Lord"],
        ["Nottingham Forest", "FA Cup"],
    ):
        for top_k in (1, 2, 3, 5):
            got = [(hit.chunk.chunk_id, hit.score) for hit in keyword_search(snapshot, keywords, top_k).hits]
            assert got == corpus.ranking(keywords, top_k), (keywords, top_k)


def test_ampersand_and_and_match_each_other(snapshot: IndexSnapshot):
    for keyword in ("Thelma & Louise", "Thelma and Louise", "thelma&louise"):
        assert set(titles(snapshot, [keyword])) == {"Thelma & Louise", "Geena Davis"}, keyword
        assert titles(snapshot, [keyword])[0] == "Thelma & Louise"


@pytest.mark.anyio
async def test_a_full_title_is_one_keyword_up_to_the_bound(index: str):
    title = "The Covenant, The Sword, and the Arm of the Lord"  # 10 words
    longer = " ".join(["word"] * (MAX_KEYWORD_WORDS + 1))
    with live_index(index, load_model=False) as live:
        async with Client(create_server(live, PROFILES["arag"])) as client:
            found = await client.call_tool("keyword_search", {"keywords": [title], "top_k": 2})
            assert not found.is_error, found.content[0].text
            assert [hit["title"] for hit in found.structured_content["results"]] == [title, "Arkansas militias"]
            refused = await client.call_tool("keyword_search", {"keywords": [longer]})
            assert refused.is_error and f"{MAX_KEYWORD_WORDS + 1}-word" in refused.content[0].text


@pytest.mark.anyio
async def test_every_place_brings_new_text_and_a_read_chunk_can_come_again(index: str):
    with live_index(index, load_model=False) as live:
        async with Client(create_server(live, PROFILES["arag"])) as client:
            first = await client.call_tool("keyword_search", {"keywords": ["Tim Burstall"], "top_k": 2})
            shown = [hit["chunk_id"] for hit in first.structured_content["results"]]
            conversation = first.structured_content["conversation"]
            await client.call_tool("chunk_read", {"chunk_ids": shown, "conversation": conversation})

            again = await client.call_tool(
                "keyword_search", {"keywords": ["Tim Burstall"], "top_k": 2, "conversation": conversation}
            )
            results = again.structured_content["results"]
            assert len(results) == 2 and not {hit["chunk_id"] for hit in results} & set(shown)
            assert not any(hit.get("already_sent") for hit in results)
            passed = again.structured_content["passed_over"]
            assert [(p["rank"], p["chunk_id"]) for p in passed] == [(1, shown[0]), (2, shown[1])]
            assert f"[1] {shown[0]} (Tim Burstall)" in again.content[0].text and "again: true" in again.content[0].text

            read = await client.call_tool("chunk_read", {"chunk_ids": [shown[0]], "conversation": conversation})
            assert read.structured_content["chunks"][0]["status"] == "read_before"
            back = await client.call_tool(
                "chunk_read", {"chunk_ids": [shown[0]], "again": True, "conversation": conversation}
            )
            assert back.structured_content["chunks"][0]["status"] == "ok"
            assert back.structured_content["chunks"][0]["text"].startswith("Tim Burstall was")


@pytest.mark.anyio
async def test_a_keywords_best_chunk_is_its_best_unsent_one(index: str):
    with live_index(index, load_model=False) as live:
        async with Client(create_server(live, PROFILES["arag"])) as client:
            first = await client.call_tool("keyword_search", {"keywords": ["Atlanta", "Georgia"], "top_k": 2})
            conversation = first.structured_content["conversation"]
            assert {hit["title"] for hit in first.structured_content["results"]} == {"Atlanta", "Georgia (U.S. state)"}
            again = await client.call_tool(
                "keyword_search", {"keywords": ["Atlanta", "Georgia"], "top_k": 2, "conversation": conversation}
            )
            titles_now = [hit["title"] for hit in again.structured_content["results"]]
            assert "Atlanta" not in titles_now and "Georgia (U.S. state)" not in titles_now and titles_now
            assert {p["title"] for p in again.structured_content["passed_over"]} <= {"Atlanta", "Georgia (U.S. state)"}


@pytest.mark.anyio
async def test_offset_gives_the_results_after_those_shown(index: str):
    with live_index(index, load_model=False) as live:
        async with Client(create_server(live, PROFILES["arag"])) as client:
            whole = await client.call_tool("keyword_search", {"keywords": ["Georgia"], "top_k": 4})
            expected = [hit["chunk_id"] for hit in whole.structured_content["results"]]
            seen, offset = [], 0
            while offset is not None:
                page = await client.call_tool("keyword_search", {"keywords": ["Georgia"], "top_k": 1, "offset": offset})
                seen += [hit["chunk_id"] for hit in page.structured_content["results"]]
                offset = page.structured_content.get("next_offset")
                assert offset is None or f"offset={offset}" in page.content[0].text
            assert seen == expected
            refused = await client.call_tool("keyword_search", {"keywords": ["Georgia"], "offset": 201})
            assert refused.is_error and "200" in refused.content[0].text


@pytest.mark.anyio
async def test_a_named_page_says_so_and_an_offset_that_is_a_ranking_place_says_that(index: str):
    """Scores out of order are explained on the result line; the continuation offset, where a
    keyword's best chunk came from further down, is said to be a place in the ranking."""
    with live_index(index, load_model=False) as live:
        async with Client(create_server(live, PROFILES["arag"])) as client:
            found = await client.call_tool("keyword_search", {"keywords": ["Tim Burstall"], "top_k": 3})
            results = found.structured_content["results"]
            assert results[0]["page_of"] == "Tim Burstall" and all("page_of" not in r for r in results[1:])
            assert "| page of 'Tim Burstall'" in found.content[0].text.splitlines()[1]
            mixed = await client.call_tool("keyword_search", {"keywords": ["Georgia", "film"], "top_k": 3})
            content = mixed.structured_content
            assert len(content["results"]) == 3 and content["next_offset"] == 2
            assert "offset=2 (the ranking's place after this page)" in content["message"]
            plain = await client.call_tool("keyword_search", {"keywords": ["film"], "top_k": 2})
            assert "offset=2." in plain.structured_content["message"]
