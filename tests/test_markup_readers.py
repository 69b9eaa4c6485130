"""reStructuredText through docutils, AsciiDoc and Org by their line syntax: sections, and no markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from arag_mcp.indexer.sources.document import Document, SkippedFile
from arag_mcp.indexer.sources.files import iter_documents
from arag_mcp.indexer.sources.outline import heading_path
from arag_mcp.indexer.sources.rest import LINE_LENGTH_LIMIT, MAX_PARSED_CHARS

GUIDE_RST = """\
==============
Sprocket Guide
==============

.. _download: https://example.com/sprocket.tar.gz
.. |project| replace:: Sprocket

.. This comment says nothing worth indexing.

Call :func:`~sprocket.gears.turn` after :ref:`the setup <setup>`; get it from download_.
|project| turns gears.

.. toctree::
   :maxdepth: 2

   install
   usage

Installing
----------

Run the installer::

    pip install sprocket
      --upgrade

.. code-block:: python
   :emphasize-lines: 1

   import sprocket
   sprocket.turn()

On Windows
~~~~~~~~~~

.. versionadded:: 1.2

   The *MSI* package installs it.

.. note:: Reboot after installing.

=====  =======
Gear   Teeth
=====  =======
small  12
large  40
=====  =======

Configuring
-----------

The ratio is set in ``sprocket.ini``.

- one item
- another item
"""


def read(path: Path) -> tuple[list[Document], list[SkippedFile]]:
    skipped: list[SkippedFile] = []
    return list(iter_documents([path], skipped)), skipped


def read_one(path: Path) -> Document:
    documents, skipped = read(path)
    assert skipped == [] and len(documents) == 1
    return documents[0]


def path_at(document: Document, passage: str) -> tuple[str, ...]:
    return heading_path(document.headings, document.text.index(passage))


def test_restructuredtext_sections_at_their_offsets_and_only_text(tmp_path: Path, capfd: pytest.CaptureFixture[str]):
    (tmp_path / "guide.rst").write_text(GUIDE_RST)
    guide = read_one(tmp_path / "guide.rst")
    assert guide.title == "Sprocket Guide" and guide.file_type == "rst"
    sections = {path[-1]: offset for offset, path in guide.headings}
    assert [path for _, path in guide.headings] == [
        ("Sprocket Guide",),
        ("Sprocket Guide", "Installing"),
        ("Sprocket Guide", "Installing", "On Windows"),
        ("Sprocket Guide", "Configuring"),
    ]
    assert all(guide.text.startswith(title, offset) for title, offset in sections.items())
    assert path_at(guide, "Call turn") == ("Sprocket Guide",)
    assert path_at(guide, "pip install sprocket") == ("Sprocket Guide", "Installing")
    assert path_at(guide, "The MSI package") == ("Sprocket Guide", "Installing", "On Windows")
    assert path_at(guide, "The ratio is set") == ("Sprocket Guide", "Configuring")

    assert "Call turn after the setup; get it from download." in guide.text  # roles and references as their text
    assert "Sprocket turns gears." in guide.text  # a substitution replaced
    assert "pip install sprocket\n  --upgrade" in guide.text  # a literal block keeps its lines
    assert "import sprocket\nsprocket.turn()" in guide.text  # a code block docutils cannot run (a Sphinx option)
    assert "versionadded 1.2: The MSI package installs it." in guide.text  # an unknown directive's content
    assert "Note: Reboot after installing." in guide.text
    assert "Gear | Teeth\nsmall | 12\nlarge | 40" in guide.text
    assert "- one item\n- another item" in guide.text
    for markup in "=== --- ~~~ .. _download https:// comment toctree maxdepth usage :func: :: `` |project|".split():
        assert markup not in guide.text, markup
    assert capfd.readouterr() == ("", "")


def test_broken_restructuredtext_is_indexed_without_a_word_on_stdout_or_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
):
    (tmp_path / "broken.rst").write_text(
        "Top\n===\n\nFirst part.\n\nSub\n---\n\nSecond part.\n\nDeep\n~~~~\n\nThird part.\n\n"
        "Back\n====\n\nOdd\n~~~\n\nFourth :unknown-role:`part` and |undefined|.\n\n.. image::\n\n"
        "+-----+\n| bad table\n+--\n\n* unclosed *emphasis and ``literal\n"
    )
    documents, skipped = read(tmp_path / "broken.rst")
    assert skipped == [] and len(documents) == 1
    broken = documents[0]
    assert broken.title == "Top"
    assert path_at(broken, "Third part.") == ("Top", "Sub", "Deep")
    assert "Back\n\nOdd\n\nFourth" in broken.text  # a title at an inconsistent level: a paragraph
    assert path_at(broken, "Fourth") == ("Back",)
    assert "Fourth part and undefined." in broken.text
    assert capfd.readouterr() == ("", "")


def test_restructuredtext_never_includes_another_file(tmp_path: Path, capfd: pytest.CaptureFixture[str]):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LINE\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.rst").write_text(
        f"Page\n====\n\n.. include:: {secret}\n\n.. include:: /etc/passwd\n\n.. literalinclude:: {secret}\n\n"
        f".. raw:: html\n   :file: {secret}\n\n.. csv-table:: Data\n   :file: {secret}\n\n"
        f".. versionadded:: 2.0\n\n   .. include:: {secret}\n\n   Visible text.\n"
    )
    page = read_one(tmp_path / "docs" / "page.rst")
    assert "Visible text." in page.text
    assert "TOP-SECRET" not in page.text and "root:" not in page.text and "secret" not in page.text
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize(
    "body, reason",
    [
        ("word " * (LINE_LENGTH_LIMIT // 4), f"a line is longer than {LINE_LENGTH_LIMIT:,} characters"),
        ("A short line of words.\n" * (MAX_PARSED_CHARS // 20), f"longer than {MAX_PARSED_CHARS:,} characters"),
        ("".join(f"{' ' * depth}Quoted {depth} deep.\n\n" for depth in range(400)), "RecursionError"),
    ],
    ids=["long line", "long text", "too deep"],
)
def test_restructuredtext_docutils_cannot_read_is_read_as_raw_text_saying_so(tmp_path: Path, body: str, reason: str):
    (tmp_path / "big.rst").write_text(f"Big\n===\n\n{body}\n")
    documents, skipped = read(tmp_path / "big.rst")
    assert [document.title for document in documents] == ["Big"]
    assert documents[0].text.startswith(f"Big\n===\n\n{body[:20]}")  # as written
    assert [notice.reason for notice in skipped] == [f"indexed, as raw text: docutils cannot read it ({reason})"]
    assert skipped[0].indexed


def test_asciidoc_headings_outside_blocks_and_no_markup_lines(tmp_path: Path):
    (tmp_path / "guide.adoc").write_text(
        "= Sprocket Guide\n:toc: left\n:icons: font\n\n// a line comment\nIntro paragraph\nover two lines.\n\n"
        "[[install]]\n== Installing\n\n.Install command\n[source,bash]\n----\n== not a heading\n"
        "pip install sprocket\n\n# still code\n----\n\n////\n== commented out\n////\n\n=== On Windows\n\n"
        "====\nAn example block.\n== not a heading either\n====\n\ninclude::other.adoc[]\nimage::pic.png[A picture]\n\n"
        "== Configuring\n\nSet the ratio.\n"
    )
    guide = read_one(tmp_path / "guide.adoc")
    assert guide.title == "Sprocket Guide" and guide.file_type == "adoc"
    assert [path for _, path in guide.headings] == [
        ("Sprocket Guide",),
        ("Sprocket Guide", "Installing"),
        ("Sprocket Guide", "Installing", "On Windows"),
        ("Sprocket Guide", "Configuring"),
    ]
    assert all(guide.text.startswith(path[-1], offset) for offset, path in guide.headings)
    assert "Intro paragraph\nover two lines." in guide.text
    assert path_at(guide, "Install command") == ("Sprocket Guide", "Installing")
    assert "== not a heading\npip install sprocket\n\n# still code" in guide.text  # a listing keeps its lines
    assert path_at(guide, "An example block.\n== not a heading either") == (
        "Sprocket Guide",
        "Installing",
        "On Windows",
    )
    assert path_at(guide, "Set the ratio.") == ("Sprocket Guide", "Configuring")
    for markup in ":toc: :icons: comment [[install]] [source ---- //// ==== include:: image:: .Install".split():
        assert markup not in guide.text, markup


def test_asciidoc_block_never_closed_is_not_one(tmp_path: Path):
    (tmp_path / "stray.asciidoc").write_text(
        "= Stray\n\n----\nText after a stray delimiter.\n\n== Later\n\nStill found.\n"
    )
    stray = read_one(tmp_path / "stray.asciidoc")
    assert stray.file_type == "adoc"
    assert path_at(stray, "Still found.") == ("Stray", "Later")
    assert "----" not in stray.text and "Text after a stray delimiter." in stray.text


def test_org_headings_outside_blocks_and_no_keywords_or_drawers(tmp_path: Path):
    (tmp_path / "notes.org").write_text(
        "#+TITLE: Sprocket Notes\n#+AUTHOR: Jane\n#+OPTIONS: toc:nil\n\nIntro text.\n\n"
        "* TODO Installing :setup:\n:PROPERTIES:\n:ID: 1234\n:END:\nInstall it like this:\n"
        "#+BEGIN_SRC sh\n,* not a heading\n* not a heading either\npip install sprocket\n#+END_SRC\n\n"
        "** [#A] On Windows\n# a comment\nUse the MSI.\n#+CAPTION: The ratio table\n| a | b |\n\n"
        "* Configuring\n#+begin_comment\n* hidden\n#+end_comment\nSet the ratio.\n"
    )
    notes = read_one(tmp_path / "notes.org")
    assert notes.title == "Sprocket Notes" and notes.file_type == "org"
    assert [path for _, path in notes.headings] == [("Installing",), ("Installing", "On Windows"), ("Configuring",)]
    assert all(notes.text.startswith(path[-1], offset) for offset, path in notes.headings)
    assert path_at(notes, "Intro text.") == ()
    assert "* not a heading\n* not a heading either\npip install sprocket" in notes.text  # the block's lines, unescaped
    assert path_at(notes, "pip install") == ("Installing",)
    assert path_at(notes, "Use the MSI.\nThe ratio table\n| a | b |") == ("Installing", "On Windows")
    assert path_at(notes, "Set the ratio.") == ("Configuring",)
    for markup in "#+ Jane toc:nil :PROPERTIES: 1234 :END: TODO :setup: [#A] comment hidden".split():
        assert markup not in notes.text, markup


def test_org_block_or_drawer_never_closed_is_not_one(tmp_path: Path):
    (tmp_path / "open.org").write_text(
        "* First\n#+BEGIN_SRC python\nprint(1)\n\n* Second\n:NOTES:\nA drawer line.\n* Third\n:END:\nText.\n"
    )
    notes = read_one(tmp_path / "open.org")
    assert [path for _, path in notes.headings] == [("First",), ("Second",), ("Third",)]
    assert path_at(notes, "print(1)") == ("First",)
    assert path_at(notes, "A drawer line.") == ("Second",)  # the :END: comes after the next heading
