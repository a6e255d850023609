"""Extraction on real pages from Debian doc packages (see data/SOURCES.md): what each keeps
and what it drops."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.rag.extract import ExtractedDocument, extract

DOCS = Path(__file__).parents[1] / "data" / "docs"


def _doc(name: str) -> ExtractedDocument:
    return extract(name, (DOCS / name).read_bytes())


def _lines(doc: ExtractedDocument) -> list[str]:
    return [line.strip() for line in doc.text.splitlines()]


def test_texinfo_page_keeps_the_manual_and_drops_its_navigation() -> None:
    doc = _doc("gettext_10.html")
    assert doc.title == "Producing Binary MO Files"
    assert doc.extra["full_title"] == "GNU gettext utilities: 10. Producing Binary MO Files"
    assert (
        "The msgfmt programs generates a binary message catalog from a textual translation "
        "description." in doc.text
    )
    # an option table entry is one "terms: definition" line
    entry = "\u2018-j\u2019, \u2018--java\u2019: Java mode: generate a Java ResourceBundle class."
    assert entry in _lines(doc)
    # code in a layout table stays a whole block, its lines intact
    assert "msgfmt [option] filename.po …" in _lines(doc)
    assert "O + ((N-1)*8)| length & offset (N-1)th string           |  | |" in doc.text
    for furniture in ("[ << ]", "[Top]", "[Contents]", "[Index]", "[ ? ]", "<<", ">>"):
        assert furniture not in doc.text.replace("<----", "")
    assert "This document was generated" not in doc.text
    assert "Beginning of this chapter" not in doc.text
    assert [s.heading for s in doc.sections][:2] == [
        "10. Producing Binary MO Files",
        "10. Producing Binary MO Files > 10.1 Invoking the msgfmt Program",
    ]


def test_node_markdown_keeps_its_offsets_and_blanks_metadata() -> None:
    raw = (DOCS / "os.md").read_text()
    doc = _doc("os.md")
    assert len(doc.text) == len(raw) and doc.text.count("\n") == raw.count("\n")
    assert "The operating system-specific end-of-line marker." in doc.text
    assert "* `\\n` on POSIX\n* `\\r\\n` on Windows" in doc.text
    assert "* Returns: {string}" in doc.text  # type lines are content
    assert "const os = require('node:os');" in doc.text
    for furniture in ("<!--", "-->", "YAML", "added: v0.7.8", "introduced_in", "source_link"):
        assert furniture not in doc.text
    assert "Stability: 2 - Stable" not in doc.text
    assert "]: process.md#processarch" not in doc.text
    assert "[`process.arch`][]" in doc.text  # the link's text in the prose stays
    headings = [s.heading for s in doc.sections]
    assert "OS > os.EOL" in headings and "OS > os.cpus()" in headings


def test_asciidoc_manual_page_is_rendered_to_text() -> None:
    doc = _doc("git-init.txt")
    assert doc.format == "asciidoc" and doc.title == "git-init(1)"
    lines = _lines(doc)
    assert (
        "-q, --quiet: Only print error and warning messages; all other output will be "
        "suppressed." in lines
    )
    assert (
        "--bare: Create a bare repository. If GIT_DIR environment is not set, it is set to "
        "the current working directory." in lines
    )
    # the synopsis ([verse]) keeps its lines; the example keeps its code without callouts
    assert "git init [-q | --quiet] [--bare] [--template=<template-directory>]" in lines
    assert "$ git init" in lines and "$ git add ." in lines
    # the callout list stays, as lines of text
    assert "Add all existing files to the index." in lines
    assert "See githooks(5) for more general info on hook execution." in lines
    for markup in ("[verse]", "::", "include::", "<1>", "<2>", "linkgit:", "----", "'git init'"):
        assert markup not in doc.text
    assert "git-init(1) > OPTIONS" in [s.heading for s in doc.sections]


def test_asciidoc_anchors_and_attributes_are_dropped() -> None:
    doc = _doc("ToolsForGit.txt")
    assert doc.format == "asciidoc"
    assert "[[" not in doc.text and ":sectanchors:" not in doc.text
    assert "Tools for developing Git > Summary" in [s.heading for s in doc.sections]
    assert "The contrib/vscode/init.sh script creates configuration files" in doc.text


def test_asciidoc_tables_become_rows() -> None:
    snippet = (
        'Option table\n============\n\n[cols="1,2",options="header"]\n|===\n'
        "|Option |Meaning\n|`-q` |quiet\n|`--bare`\n|a bare repository\n|===\n\n"
        "include::footer.txt[]\n\nterm::\n\tIts definition.\n"
    )
    doc = extract("table.adoc", snippet.encode())
    assert "Option | Meaning\n-q | quiet\n--bare | a bare repository" in doc.text
    assert "term: Its definition." in doc.text


def test_a_real_asciidoc_table_reads_as_rows_with_its_columns_kept() -> None:
    doc = _doc("reftable.txt")
    assert doc.format == "asciidoc"
    rows = _lines(doc)
    assert "repository | packed-refs | reftable | % original | avg ref | avg obj" in rows
    assert "android | 62.2 M | 36.1 M | 58.0% | 33 bytes | 5 bytes" in rows
    # an empty cell keeps its place, so the timings stay under their own columns
    assert "packed-refs | hot |  | 6,844.6 usec | 20,110.1 usec" in rows
    assert not any(line.startswith(("|===", "[cols=")) for line in rows)
    assert "reftable > Overview > Performance" in [s.heading for s in doc.sections]


def test_sphinx_page_keeps_the_body_only() -> None:
    doc = _doc("copy.html")
    assert doc.title == "copy"
    assert "copy.copy(x): Return a shallow copy of x." in _lines(doc)
    assert (
        "A shallow copy constructs a new compound object and then (to the extent possible) "
        "inserts references into it to the objects found in the original." in _lines(doc)
    )
    for chrome in (
        "Navigation",
        "This Page",
        "Quick search",
        "Show Source",
        "Previous topic",
        "Report a Bug",
        "¶",
    ):
        assert chrome not in doc.text


def test_mkdocs_page_keeps_the_body_only() -> None:
    doc = _doc("installation.html")
    assert doc.title == "Installation"
    lines = _lines(doc)
    assert "$ python --version" in lines and "pip install mkdocs" in lines
    assert (
        "MkDocs requires a recent version of Python and the Python package manager, pip, "
        "to be installed on your system." in doc.text
    )
    for chrome in (
        "Keyboard Shortcuts",
        "Edit on GitHub",
        "Built with",
        "Search",
        "Next",
        "Previous",
    ):
        assert chrome not in doc.text


def test_generated_html_of_a_manual_page_drops_its_header_chrome_but_not_its_name() -> None:
    doc = _doc("git-init.html")
    assert "git-init - Create an empty Git repository" in doc.text
    assert "$ git commit" in _lines(doc)  # callout numbers are not code


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.iterdir()))
def test_every_fixture_has_headings_and_no_bare_markup_lines(name: str) -> None:
    doc = _doc(name)
    assert doc.sections
    for start, end in doc.code:
        assert doc.text[start:end].strip()
