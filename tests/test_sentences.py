"""Rule-based sentence segmentation."""

from __future__ import annotations

import json

import pytest
import regex
from arag_mcp.indexer.text.sentences import MAX_SENTENCE_CHARS, split_sentences

from .conftest import BENCH_DATA, FIXTURES


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


CASES = [
    (
        "Dr. Smith went to Washington. He arrived at 3.14 p.m. on Monday. Then he left!",
        ["Dr. Smith went to Washington.", "He arrived at 3.14 p.m. on Monday.", "Then he left!"],
    ),
    (
        "J. R. R. Tolkien wrote books. George W. Bush was president.",
        ["J. R. R. Tolkien wrote books.", "George W. Bush was president."],
    ),
    (
        "The U.S. Army is big. She lives in the U.S. The weather is nice.",
        ["The U.S. Army is big.", "She lives in the U.S.", "The weather is nice."],
    ),
    (
        'He said "Go." Then he left. Wait... what? Really?! Yes… Fine.',
        ['He said "Go."', "Then he left.", "Wait... what?", "Really?!", "Yes…", "Fine."],
    ),
    (
        "Use e.g. this and i.e. that. Version v2.0.1 is out. It costs $5.00 today.",
        ["Use e.g. this and i.e. that.", "Version v2.0.1 is out.", "It costs $5.00 today."],
    ),
    (
        "No. 5 is here. See Fig. 3 for details. Mt. Everest is tall.",
        ["No. 5 is here.", "See Fig. 3 for details.", "Mt. Everest is tall."],
    ),
    (
        "# Title\n\nSome text here.\nA wrapped\nline continues. Next.\n\n- item one\n- item two\n1. first\n2) second",
        [
            "# Title",
            "Some text here.",
            "A wrapped\nline continues.",
            "Next.",
            "- item one",
            "- item two",
            "1. first",
            "2) second",
        ],
    ),
    ("Heading\n=======\nBody text.", ["Heading\n=======", "Body text."]),
    ("東京は大きい。大阪も大きい！本当？はい", ["東京は大きい。", "大阪も大きい！", "本当？", "はい"]),
    ("1995.\n\nParis.", ["1995.", "Paris."]),
    (
        "It was founded in 1889. (See below.) The tower is 330 m tall.",
        ["It was founded in 1889.", "(See below.)", "The tower is 330 m tall."],
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_segmentation(text: str, expected: list[str]):
    assert sentences(text) == expected


CJK_SENTENCES = {
    "ja.txt": [
        "Debianはフリーなオペレーティングシステムです。",
        "パッケージはAPTで管理します！",
        "使い方は難しいですか？",
        "いいえ、簡単です｡",
        "設定ファイルは/etcにあります．",
        "現在の版は１２．５です。",
        "次の章へ進みましょう!",
        "準備はできましたか?",
    ],
    "zh.txt": [
        "Debian 是一个自由的操作系统。",
        "它由世界各地的志愿者维护！",
        "你用过吗？",
        "我已经用了很多年﹗",
        "软件包由 APT 管理﹒",
        "安装很方便﹖",
        "当然。",
        "版本号是１２．５。",
        "我很喜欢它.",
        "下次再说!",
        "好吗?",
    ],
}


@pytest.mark.parametrize("name", sorted(CJK_SENTENCES))
def test_japanese_and_chinese_split_on_every_width_of_stop_but_not_inside_numbers(name: str):
    text = (FIXTURES / "sentences" / name).read_text(encoding="utf-8")
    assert sentences(text) == CJK_SENTENCES[name]
    assert_covers(text)


def test_whitespace_only_gives_nothing():
    assert split_sentences("") == [] and split_sentences(" \n\t\n ") == []


def assert_covers(text: str) -> None:
    spans = split_sentences(text)
    assert all(start < end for start, end in spans)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))
    for start, end in spans:
        assert not text[start].isspace() and not text[end - 1].isspace()
    assert "".join(text[s:e] for s, e in spans).replace("\n", "").replace(" ", "") == regex.sub(r"\s", "", text)


@pytest.mark.parametrize(("text", "_"), CASES)
def test_spans_cover_every_character(text: str, _):
    assert_covers(text)


@pytest.mark.skipif(not BENCH_DATA.exists(), reason="shared bench-data not present")
def test_a_real_book_splits_and_is_covered():
    with open(BENCH_DATA / "graphrag-novel" / "corpus.jsonl") as handle:
        book = json.loads(handle.readline())["text"]
    spans = split_sentences(book)
    assert len(spans) > 500 and max(e - s for s, e in spans) < 5000
    assert_covers(book)


@pytest.mark.parametrize(
    "text",
    [" ".join(f"word{number}" for number in range(30_000)), "A short sentence comes first. " + "x" * 30_000],
    ids=["words without a full stop", "a run without a space"],
)
def test_a_line_longer_than_a_sentence_may_be_is_cut_into_sentences(text: str):
    spans = split_sentences(text)
    assert len(spans) > len(text) // MAX_SENTENCE_CHARS
    assert max(end - start for start, end in spans) <= MAX_SENTENCE_CHARS
    assert "".join(text[start:end] for start, end in spans).replace(" ", "") == text.replace(" ", "")
    assert {word for start, end in spans for word in text[start:end].split()} <= set(text.split()) | {"x" * 1000}
