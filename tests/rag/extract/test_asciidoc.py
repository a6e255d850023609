"""The AsciiDoc renderer: markup to the text a reader sees, code kept exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.rag.extract.asciidoc import extract_asciidoc, looks_like_asciidoc, render_inline


def test_inline_markup_is_rendered_and_code_is_left_alone() -> None:
    assert render_inline("See linkgit:git-add[1] and <<opts,the options>>.") == (
        "See git-add(1) and the options."
    )
    assert render_inline("Run 'git init' in ``the folder''.") == 'Run git init in "the folder".'
    assert render_inline("Declare `ffi_type **argtypes` and *bold* text.") == (
        "Declare ffi_type **argtypes and bold text."
    )
    assert render_inline("Use `{litdd}cached` or {litdd}cached.") == "Use --cached or --cached."
    assert render_inline("It's the users' files.") == "It's the users' files."


def test_listing_blocks_stay_verbatim_without_callouts() -> None:
    doc = extract_asciidoc(
        "Closures\n========\n\n[source,c]\n----\nffi_type *tm_type_elements[12]; <1>\n"
        "void **code;   // <2>\n  'quoted' *kept*\n----\n<1> The element types.\n"
        "<2> The code pointer.\n",
        "x",
    )
    assert "ffi_type *tm_type_elements[12];\nvoid **code;\n  'quoted' *kept*" in doc.text
    assert "The element types.\nThe code pointer." in doc.text
    start, end = doc.code[0]
    assert doc.text[start:end].startswith("ffi_type")


def test_sections_lists_and_definitions() -> None:
    doc = extract_asciidoc(
        "= Guide\n:toc:\n\n== Setup\n\n* first item\n  continues here\n* second item\n\n"
        "--force::\n-f::\n\tForce it.\n+\nMore about forcing.\n\n=== Deeper\n\n.A title\nText.\n",
        "x",
    )
    assert doc.title == "Guide"
    assert [s.heading for s in doc.sections] == ["Guide", "Guide > Setup", "Guide > Setup > Deeper"]
    assert "first item continues here\nsecond item" in doc.text
    assert "--force, -f: Force it.\n\nMore about forcing." in doc.text
    assert ":toc:" not in doc.text and "A title\n\nText." in doc.text


def test_detection_needs_two_kinds_of_markers() -> None:
    assert looks_like_asciidoc("Title\n=====\n\nSee linkgit:git[1].\n")
    assert not looks_like_asciidoc("Title\n=====\n\nJust prose here.\n")
    assert not looks_like_asciidoc("A note: nothing special.\n")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Title",
                "=====",
                "----",
                "term::",
                "* item",
                "[verse]",
                "|===",
                "|a |b",
                "include::x[]",
                "  indented",
                "",
                "text with `code **x` and 'em'",
                "<1> callout",
                "+",
                "== Section",
                "....",
                "ifdef::x[]",
            ]
        ),
        max_size=40,
    )
)
def test_for_any_asciidoc_headings_and_code_spans_point_into_the_text(lines: list[str]) -> None:
    doc = extract_asciidoc("\n".join(lines), "fallback")
    for section in doc.sections:
        assert doc.text[section.start : section.body_start] == section.heading.split(" > ")[-1]
    for start, end in doc.code:
        assert 0 <= start < end <= len(doc.text)
    prose = doc.text
    for start, end in reversed(doc.code):  # a listing block may show markup as its content
        prose = prose[:start] + prose[end:]
    assert "include::" not in prose and "[verse]" not in prose
