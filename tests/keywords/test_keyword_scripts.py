"""Keyword search in scripts written without spaces: a keyword's characters match inside the runs
of Han, kana, Hangul, Thai, ... letters that whole-word matching would take as one word; small
documents made here, and Debian's Japanese and Chinese reference manual where it is installed."""

from __future__ import annotations

from pathlib import Path

import index_dump
import pytest
from arag_mcp.indexer.build_options import BuildOptions
from arag_mcp.indexer.index.keywords import search as keyword_matching
from arag_mcp.indexer.index.keywords.definition import WordCorpus, keyword_ranking
from arag_mcp.indexer.index.snapshot import open_index
from arag_mcp.indexer.indexes import Index

from ..conftest import HASHED_MODEL
from .keyword_counts import occurrences

DOCUMENTS = {
    "東京の歴史.md": "東京は日本の首都です。東京の人口は多い。東京駅と東京タワーは有名です。江戸は東京の旧名です。",
    "北京.md": "北京是中华人民共和国的首都。北京有很多名胜古迹！你去过北京吗？",
    "서울.md": "서울에서 만나요. 서울은 한국의 수도입니다.",
    "bangkok.md": "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย ที่นี่มีวัดมากมาย",
    "kana.md": "ｶﾞｽの料金。ガスの検針。かすてら。",
    "tokyo.md": "Tokyo is the capital of Japan. The Tokyo Tower stands in Minato.",
    "macos.md": "\u304b\u3099\u3059\u306e\u8a71\u3002",  # がすの話。 as macOS writes it: か + a combining voicing mark
    "hindi.md": "हिन्दी भारत की भाषा है। नदी बहती है।",
    "nepali.md": "हिन्दी और नेपाली।",
    "rivers.md": "गंगा और यमुना बड़ी नदियाँ हैं।",
}
DEBIAN_REFERENCE = Path("/usr/share/debian-reference")


@pytest.fixture(scope="module")
def scripts_index(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("scripts")
    corpus, index = folder / "docs", folder / "idx"
    corpus.mkdir()
    for name, text in DOCUMENTS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    Index(str(index)).add([corpus], BuildOptions(model=HASHED_MODEL, progress=False))
    return index


def search(index: Path, keyword: str) -> dict[str, int]:
    """{title: count} of the chunks a lone keyword matches."""
    return occurrences(open_index(str(index)), keyword)


def test_a_han_keyword_matches_inside_runs_of_han_and_kana(scripts_index: Path):
    assert search(scripts_index, "東京") == {"東京の歴史": 6}  # 5 times in the text, once in the title
    assert search(scripts_index, "歴史") == {"東京の歴史": 1}
    assert search(scripts_index, "首都") == {"東京の歴史": 1, "北京": 1}
    assert search(scripts_index, "北京") == {"北京": 4}


def test_korean_and_thai_keywords_match_inside_words(scripts_index: Path):
    assert search(scripts_index, "서울") == {"서울": 3}
    assert search(scripts_index, "ประเทศไทย") == {"bangkok": 1}


def test_kana_are_compared_by_width_but_voicing_marks_count(scripts_index: Path):
    assert search(scripts_index, "ガス") == {"kana": 2}  # half-width ｶﾞｽ is ガス
    assert search(scripts_index, "カス") == {}  # か is not が: voicing marks are not accents


def test_decomposed_kana_are_found_by_the_composed_keyword(scripts_index: Path):
    assert search(scripts_index, "がす") == {"macos": 1}
    assert "がすの話。" in open_index(str(scripts_index)).chunks.table.to_pandas()["text"].tolist()  # stored composed


def test_indic_signs_are_letters_not_accents(scripts_index: Path):
    """The virama and vowel signs are parts of a Devanagari word: "नदी" (river) is not found in
    "नदियाँ" (rivers), cut at its vowel signs into "नद" and "य" if signs broke words, and "हिन्दी"
    keeps its virama when folded."""
    assert search(scripts_index, "नदी") == {"hindi": 1}
    assert search(scripts_index, "नदियाँ") == {"rivers": 1}
    assert search(scripts_index, "हिन्दी") == {"hindi": 1, "nepali": 1}
    assert search(scripts_index, "हिनदी") == {}


def test_latin_keywords_still_match_whole_words_only(scripts_index: Path):
    assert search(scripts_index, "Tokyo") == {"tokyo": 3}  # the title "tokyo" and twice in the text
    assert search(scripts_index, "Tok") == {}


def test_the_snippet_is_the_sentence_that_holds_the_keyword(scripts_index: Path):
    [hit] = keyword_matching.keyword_search(open_index(str(scripts_index)), ["名胜古迹"], 5).hits
    assert hit.matched == ["北京有很多名胜古迹！"]
    assert hit.keywords == ("名胜古迹",)


def test_the_papers_substring_matching_agrees_on_these_scripts(scripts_index: Path):
    found = keyword_matching.keyword_search(open_index(str(scripts_index)), ["東京"], 10, "substring").hits
    assert [(hit.chunk.title, hit.score) for hit in found] == [("東京の歴史", 10)]  # 5 times, each worth 2


def _agrees_with_brute_force(index: Path, keyword_sets: list[list[str]]) -> int:
    snapshot = open_index(str(index))
    chunks = index_dump.all_chunks(snapshot)
    ids, titles, texts = [c.chunk_id for c in chunks], [c.title for c in chunks], [c.text for c in chunks]
    corpus = WordCorpus(ids, titles, texts, [c.tokens for c in chunks])
    matched = 0
    for keywords in keyword_sets:
        for top_k in (1, 5):
            for match in ("word", "substring"):
                found = keyword_matching.keyword_search(snapshot, keywords, top_k, match)
                got = [(hit.chunk.chunk_id, hit.score) for hit in found.hits]
                expected = (
                    corpus.ranking(keywords, top_k) if match == "word" else keyword_ranking(ids, texts, keywords, top_k)
                )
                assert got == expected, (keywords, match)
                matched += bool(got)
    return matched


def test_every_script_agrees_with_the_brute_force_definition(scripts_index: Path):
    keyword_sets = [
        ["東京"], ["東京", "Tokyo"], ["東京 駅"], ["は 日本"], ["서울", "수도"], ["ガス", "の"], ["京"], ["がす"],
        ["नदी"], ["हिन्दी", "भाषा"], ["ที่นี่"],
    ]  # fmt: skip
    assert _agrees_with_brute_force(scripts_index, keyword_sets) > 10


@pytest.mark.slow  # embeds two whole manuals
@pytest.mark.skipif(not (DEBIAN_REFERENCE / "ch01.ja.html").exists(), reason="debian-reference-ja/-zh-cn not installed")
def test_debians_japanese_and_chinese_reference_manuals(tmp_path: Path):
    pages = [DEBIAN_REFERENCE / name for name in ("ch01.ja.html", "ch01.zh-cn.html")]
    pages = [page for page in pages if page.exists()]
    index = tmp_path / "idx"
    Index(str(index)).add(pages, BuildOptions(model=HASHED_MODEL, progress=False))
    keyword_sets = [
        ["パッケージ"],
        ["インストール"],
        ["软件包"],
        ["安装", "系统"],
        ["Debian"],
        ["パッケージ", "Debian"],
    ]
    assert _agrees_with_brute_force(index, keyword_sets) >= 8
    assert search(index, "パッケージ")
