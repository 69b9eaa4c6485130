"""Small files that would inflate to gigabytes are skipped with one line naming the file and the
bound, and the other files are read."""

from __future__ import annotations

from pathlib import Path

from arag_mcp.indexer.headings import ALIAS_GROWTH_LIMIT
from arag_mcp.indexer.readers import Document, SkippedFile, iter_documents

from .bombs import yaml_alias_bomb

NORMAL = "# Radium\n\nRadium glows blue in the dark.\n"


def read(folder: Path) -> tuple[list[Document], dict[str, str]]:
    skipped: list[SkippedFile] = []
    documents = list(iter_documents([folder], skipped))
    return documents, {Path(item.path).name: item.reason for item in skipped}


def test_front_matter_that_reuses_blocks_is_read(tmp_path: Path):
    (tmp_path / "deploy.md").write_text(
        "---\ntitle: Deploy\nbase: &base {owner: ops, tier: 2}\nprod:\n  <<: *base\n  tier: 1\nstage: *base\n---\nText.\n"
    )
    documents, skipped = read(tmp_path)
    assert skipped == {}
    assert documents[0].title == "Deploy"
    assert documents[0].metadata == {
        "base": '{"owner": "ops", "tier": 2}',
        "prod": '{"owner": "ops", "tier": 1}',
        "stage": '{"owner": "ops", "tier": 2}',
    }


def test_front_matter_that_aliases_blow_up_is_skipped(tmp_path: Path):
    (tmp_path / "laughs.md").write_text(yaml_alias_bomb(levels=6))  # 9**6 "lol": a few MB, over the limit
    (tmp_path / "loop.md").write_text("---\nitems: &items [one, *items]\n---\nText.\n")
    (tmp_path / "deep.md").write_text("---\nitems: " + "[" * 5000 + "]" * 5000 + "\n---\nText.\n")
    (tmp_path / "normal.md").write_text(NORMAL)
    documents, skipped = read(tmp_path)
    assert [document.title for document in documents] == ["Radium"]
    assert skipped == {
        "laughs.md": "unreadable: front matter aliases (*name) expand it by 2,466,171 nodes and characters "
        f"(limit {ALIAS_GROWTH_LIMIT:,}); write the values out or remove the aliases",
        "loop.md": "unreadable: front matter contains itself through an alias (*name); remove the alias",
        "deep.md": "unreadable: front matter nested too deeply to read; flatten it or remove it",
    }
