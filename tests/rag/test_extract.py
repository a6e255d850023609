from __future__ import annotations

import pytest

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
