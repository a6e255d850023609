from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kforge.rag.extract import ExtractionError, decode_text, detect_text, extract, format_of


def test_format_by_suffix() -> None:
    assert format_of("a/B.MD") == "markdown"
    assert format_of("x.htm") == "html"
    assert format_of("x.pdf") == "pdf"
    assert format_of("x.txt") == "text"
    assert format_of("x.png") is None


def test_markdown_is_kept_verbatim_with_heading_paths() -> None:
    text = "# Guide\n\nIntro.\n\n## Setup\n\nSteps.\n\n### Linux\n\nApt.\n\n## Usage\n\nRun.\n"
    doc = extract("guide.md", text.encode())
    assert doc.text == text
    assert doc.title == "Guide"
    assert [s.heading for s in doc.sections] == [
        "Guide", "Guide > Setup", "Guide > Setup > Linux", "Guide > Usage",
    ]  # fmt: skip
    for section in doc.sections:
        assert text[section.start :].startswith("#")


def test_markdown_ignores_headings_in_code_fences_and_reads_setext() -> None:
    text = "Title\n=====\n\n```\n# not a heading\n```\n\nSub\n---\n\nbody\n"
    doc = extract("x.md", text.encode())
    assert [s.heading for s in doc.sections] == ["Title", "Title > Sub"]
    assert doc.sections[1].start == text.index("Sub")


def test_markdown_front_matter_is_not_content() -> None:
    text = "---\ntitle: t\n---\n# Real\n\nbody\n"
    doc = extract("x.md", text.encode())
    assert doc.body_start == text.index("# Real")
    assert doc.title == "Real"


def test_markdown_without_headings_takes_title_from_file_name() -> None:
    doc = extract("dir/my_notes-file.md", b"just text")
    assert doc.title == "My notes file"
    assert doc.sections == ()


def test_text_keeps_offsets_of_crlf_files() -> None:
    raw = "line one\r\n\r\nline two\r\n"
    doc = extract("a.txt", raw.encode())
    assert doc.text == raw


def test_bom_is_dropped() -> None:
    assert decode_text("\ufeffhello".encode()) == "hello"


def test_other_encodings_are_decoded_and_named_and_binary_is_refused() -> None:
    doc = extract("a.md", "# Caf\xe9\n\n\u201cna\xefve\u201d \u20ac5\n".encode("cp1252"))
    assert doc.text == "# Caf\xe9\n\n\u201cna\xefve\u201d \u20ac5\n"
    assert doc.extra["encoding"] in ("cp1252", "windows-1252")
    assert detect_text(b"caf\xe9 \x81")[0] == "caf\xe9 \x81"  # not cp1252: Latin-1
    assert detect_text("\ufeffh\xe9".encode("utf-16-le")) == ("h\xe9", "utf-16")
    assert "encoding" not in extract("a.txt", "caf\xe9".encode()).extra
    with pytest.raises(ExtractionError, match="binary content"):
        extract("a.txt", b"\x00\x01\x02")


def test_unsupported_suffix_is_refused() -> None:
    with pytest.raises(ExtractionError, match=r"unsupported format '\.docx'"):
        extract("a.docx", b"x")


def test_titles_lose_their_subtitle_manual_or_site_name() -> None:
    from kforge.rag.extract import clean_title

    cases = {
        "The Closure API (libffi: the portable foreign function interface library)": (
            "The Closure API"
        ),
        "GNU gettext utilities: 10. Producing Binary MO Files": "Producing Binary MO Files",
        "os | Node.js v18.20.4 Documentation": "os",
        "copy — Shallow and deep copy operations — Python 3.11.2 documentation": "copy",
        "Installation - MkDocs": "Installation",
        "libffi: the portable foreign function interface library": "libffi",
        "git-init(1)": "git-init(1)",
        "Durable runs": "Durable runs",
        "C++ (the language)": "C++",
    }
    for title, expected in cases.items():
        assert clean_title(title) == expected


def test_markdown_furniture_is_blanked_but_code_is_not() -> None:
    text = (
        "---\ntitle: x\n---\n# Guide\n\n<!-- YAML\nadded: v1.0.0\n-->\n\n"
        "> Stability: 2 - Stable\n\n[![build](https://ci/badge.svg)](https://ci)\n\n"
        "Text with <!-- inline note --> a comment and `<!-- in code -->`.\n\n"
        "```html\n<!-- kept in code -->\n[ref]: #kept\n```\n\n[`worker.terminate()`]: #workerterminate\n"
    )
    doc = extract("g.md", text.encode())
    assert len(doc.text) == len(text)
    for gone in ("YAML", "added:", "Stability", "badge.svg", "inline note", "#workerterminate"):
        assert gone not in doc.text
    assert "`<!-- in code -->`" in doc.text
    assert "<!-- kept in code -->\n[ref]: #kept" in doc.text
    assert [s.heading for s in doc.sections] == ["Guide"]


@given(st.text(alphabet="ab <!->`#[]:\n*", max_size=200))
def test_for_any_markdown_blanking_keeps_every_offset(text: str) -> None:
    from kforge.rag.extract.markdown import blank_markup

    blanked = blank_markup(text)
    assert len(blanked) == len(text)
    assert all(b == t or b == " " for b, t in zip(blanked, text, strict=True))
    assert [i for i, c in enumerate(blanked) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]


def test_asciidoc_txt_is_detected_and_plain_text_is_not() -> None:
    plain = extract("notes.txt", b"Shopping list\n\nMilk: two litres.\nBread.\n")
    assert plain.format == "text"
    manual = extract(
        "git-x.txt", b"git-x(1)\n========\n\nNAME\n----\ngit-x - Do x\n\n-q::\n\tQuiet.\n"
    )
    assert manual.format == "asciidoc" and "-q: Quiet." in manual.text


def test_a_markdown_fence_holding_only_includes_is_blanked_and_others_are_kept() -> None:
    text = (
        "# Prompt\n\nAsk for it with prompt=True:\n\n"
        "```Python\n{!../docs_src/options/prompt/tutorial001.py!}\n```\n\n"
        '```python\n--8<-- "examples/app.py"\nprint(1)\n```\n'
    )
    doc = extract("prompt.md", text.encode())
    assert len(doc.text) == len(text)
    assert "docs_src" not in doc.text and "```Python" not in doc.text
    assert '```python\n--8<-- "examples/app.py"\nprint(1)\n```' in doc.text
