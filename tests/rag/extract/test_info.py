"""GNU Info files (what makeinfo writes from a Texinfo manual) read as ``info`` shows them:
each node's heading a section, table entries as ``term: text`` lines, examples as code, menus,
indexes and the copyright notice left out; a manual split in parts read from its parts."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.rag.extract import ExtractionError, extract, format_of

MANUAL = (
    "This is widget.info, produced by makeinfo version 6.8 from widget.texi.\n"
    "\n"
    "INFO-DIR-SECTION Utilities\n"
    "START-INFO-DIR-ENTRY\n"
    "* widget: (widget).           Build widgets.\n"
    "END-INFO-DIR-ENTRY\n"
    "\n"
    "\x1f\n"
    "File: widget.info,  Node: Top,  Next: Invoking,  Up: (dir)\n"
    "\n"
    "GNU Widget\n"
    "**********\n"
    "\n"
    "This manual documents version 2.1 of GNU Widget.\n"
    "\n"
    "   Copyright \u00a9 2020 Free Software Foundation, Inc.\n"
    "\n"
    "     Permission is granted to copy, distribute and/or modify this\n"
    "     document under the terms of the GNU Free Documentation License.\n"
    "\n"
    "* Menu:\n"
    "\n"
    "* Invoking::                    How to run it.\n"
    "* Index::                       Index.\n"
    "\n"
    " \u2014 The Detailed Node Listing \u2014\n"
    "\n"
    "Invoking\n"
    "\n"
    "* Options::                     Every option.\n"
    "\n"
    "\x1f\n"
    "File: widget.info,  Node: Invoking,  Next: Index,  Prev: Top,  Up: Top\n"
    "\n"
    "1 Invoking \u2018widget\u2019\n"
    "*******************\n"
    "\n"
    "The synopsis is\n"
    "\n"
    "     widget [OPTION]... FILE\n"
    "\n"
    "   A widget is built in stages.(1)  *Note Options::.  Also see *note\n"
    "Options::, and the stages (*note the list: Stages.).\n"
    "\n"
    "\u2018-t NUMBER\u2019\n"
    "\u2018--tries=NUMBER\u2019\n"
    "     Try NUMBER times.  The default is to retry 20 times.\n"
    "\n"
    "     A second paragraph of the entry:\n"
    "\n"
    "          widget -t 3 a.w\n"
    "\n"
    "          widget --tries=0 b.w\n"
    "\n"
    "\u2018-q\u2019\n"
    "     Quiet.  For example, with the stages in pattern space:\n"
    "          widget -q c.w\n"
    "     prints nothing.\n"
    "\n"
    "   The stages are:\n"
    "\n"
    "   \u2022 Cutting the parts, which takes the longest\n"
    "     when the parts are large.\n"
    "   \u2022 Gluing.\n"
    "\n"
    "  12. How do I glue?\n"
    "\n"
    "     Use the glue command:\n"
    "\n"
    "          glue a.w b.w\n"
    "\n"
    "widget_build\n"
    "------------\n"
    "\n"
    " -- Function: int widget_build (const char *NAME,\n"
    "          int FLAGS)\n"
    "     Build the widget NAME.\n"
    "\n"
    "   ---------- Footnotes ----------\n"
    "\n"
    "   (1) Three stages.\n"
    "\n"
    "\x1f\n"
    "File: widget.info,  Node: Index,  Prev: Invoking,  Up: Top\n"
    "\n"
    "Index\n"
    "*****\n"
    "\n"
    "\x00\x08[index\x00\x08]\n"
    "* Menu:\n"
    "\n"
    "* tries:                                 Invoking.             (line 12)\n"
    "\n"
    "\x1f\n"
    "Tag Table:\n"
    "Node: Top\x7f215\n"
    "\x1f\n"
    "End Tag Table\n"
)


def _manual() -> str:
    return extract("widget.info", MANUAL.encode()).text


def test_names_of_info_files_are_read() -> None:
    assert format_of("info/coreutils.info.gz") == "info"
    assert format_of("gnupg.info-2.gz") == "info"
    assert format_of("widget.info") == "info"
    assert format_of("widget.information") is None


def test_nodes_are_sections_under_the_manual_title() -> None:
    document = extract("widget.info.gz", gzip.compress(MANUAL.encode()))
    assert document.title == "GNU Widget"
    assert document.format == "info"
    headings = [s.heading for s in document.sections]
    assert headings == [
        "GNU Widget",
        "GNU Widget > 1 Invoking \u2018widget\u2019",
        "GNU Widget > 1 Invoking \u2018widget\u2019 > widget_build",
        "GNU Widget > Index",
    ]


def test_menus_headers_index_and_copyright_are_left_out() -> None:
    text = _manual()
    assert "This manual documents version 2.1 of GNU Widget." in text
    for furniture in (
        "makeinfo",
        "INFO-DIR",
        "Menu",
        "How to run it",
        "Detailed Node Listing",
        "Copyright",
        "Permission is granted",
        "(line 12)",
        "Tag Table",
        "\x7f",
        "Footnotes",
    ):
        assert furniture not in text, furniture


def test_a_table_entry_is_one_line_of_its_terms_and_text() -> None:
    text = _manual()
    assert (
        "\u2018-t NUMBER\u2019, \u2018--tries=NUMBER\u2019: Try NUMBER times. "
        "The default is to retry 20 times.\n"
    ) in text
    assert "\n\nA second paragraph of the entry:\n\n" in text


def test_examples_are_code_kept_line_by_line_across_blank_lines() -> None:
    document = extract("widget.info", MANUAL.encode())
    code = [document.text[start:end] for start, end in document.code]
    assert "widget [OPTION]... FILE" in code
    assert "widget -t 3 a.w\n\nwidget --tries=0 b.w" in code
    # an example right after the sentence that leads to it, with no blank line between
    assert "widget -q c.w" in code
    # a numbered item's own paragraph is text, its example code
    assert "How do I glue?\n\nUse the glue command:\n\nglue a.w b.w\n\n" in document.text
    assert "glue a.w b.w" in code
    assert "Use the glue command:" not in " ".join(code)
    assert (
        "\u2018-q\u2019: Quiet. For example, with the stages in pattern space:\n" in document.text
    )
    assert "\n\nprints nothing.\n\n" in document.text


def test_cross_references_read_as_a_printed_manual_writes_them() -> None:
    text = _manual()
    assert (
        "A widget is built in stages.(1) See Options. Also see Options, and the stages (see the list.)"
        in text
    )
    assert "*note" not in text.lower()


def test_items_definitions_and_footnotes() -> None:
    text = _manual()
    assert "Cutting the parts, which takes the longest when the parts are large.\nGluing." in text
    assert (
        "Function: int widget_build (const char *NAME, int FLAGS): Build the widget NAME." in text
    )
    assert "(1) Three stages." in text


def test_a_file_that_only_lists_its_parts_is_reported() -> None:
    listing = (
        "This is big.info, produced by makeinfo.\n\x1f\nIndirect:\nbig.info-1: 1201\n"
        "big.info-2: 312546\n\x1f\nTag Table:\n(Indirect)\nNode: Top\x7f1201\n\x1f\nEnd Tag Table\n"
    )
    with pytest.raises(ExtractionError, match=r"only lists its parts \(big.info-1, big.info-2\)"):
        extract("big.info", listing.encode())
    with pytest.raises(ExtractionError, match="not an Info file"):
        extract("notes.info", b"Just some notes.\n")


def test_the_parts_of_a_split_manual_are_each_indexed(tmp_path: Path) -> None:
    """``big.info-1`` and ``big.info-2`` share a stem but are not two formats of one document:
    ingest indexes both (and the file listing them is reported as skipped)."""
    docs = tmp_path / "info"
    docs.mkdir()
    common = "The widget builder reads parts and glues them into widgets quickly.\n"
    for part, fact in ((1, "The default is to retry 20 times."), (2, "Gluing takes 4 seconds.")):
        node = (
            f"This is big.info, produced by makeinfo.\n\x1f\nFile: big.info,  Node: Part {part},"
            f"  Up: Top\n\n{part} Part {part}\n{'*' * 8}\n\n{common}{fact}\n"
        )
        (docs / f"big.info-{part}.gz").write_bytes(gzip.compress(node.encode()))
    (docs / "big.info.gz").write_bytes(
        gzip.compress(b"\x1f\nIndirect:\nbig.info-1: 10\nbig.info-2: 99\n")
    )
    db = tmp_path / "kf.db"
    ingest = subprocess.run(
        [sys.executable, "-m", "kforge", "--db", str(db), "ingest", str(docs), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ingest.returncode == 0, ingest.stderr
    report = json.loads(ingest.stdout)
    assert sorted(report["added"]) == ["big.info-1.gz", "big.info-2.gz"]
    assert report["duplicates"] == []
    assert [s["path"] for s in report["skipped"]] == ["big.info.gz"]
    assert "only lists its parts" in report["skipped"][0]["reason"]


_PIECES = [
    "\x1f\n",
    "File: a.info,  Node: Top,  Up: (dir)\n",
    "File: a.info,  Node: X,  Up: Top\n",
    "Title\n",
    "*****\n",
    "-----\n",
    "\n",
    "   \u2022 item\n",
    "  12. step\n",
    "\u2018-x\u2019\n",
    "     text of it\n",
    "          code line\n",
    " -- Function: f (x)\n",
    "* Menu:\n",
    "* X::   desc\n",
    "*note Foo::\n",
    "*Note Bar: Baz.\n",
    "   ---------- Footnotes ----------\n",
    "Copyright \u00a9 2020\n",
    "plain words here and there\n",
    "\x00\x08[index\x00\x08]\n",
    "Indirect:\na.info-1: 12\n",
    "     " + "word " * 14 + "end.\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_any_info_text_is_read_or_refused_with_a_reason(parts: list[str]) -> None:
    """Whatever a file holds, it is read (its sections and code spans within its text) or
    refused with an ``ExtractionError`` saying why; nothing else is raised."""
    try:
        document = extract("a.info", "".join(parts).encode())
    except ExtractionError as refused:
        assert str(refused)
        return
    assert all(0 <= s.start <= s.body_start <= len(document.text) for s in document.sections)
    assert all(0 <= start <= end <= len(document.text) for start, end in document.code)
