from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kforge.rag.chunking import ChunkingOptions, chunk_document
from kforge.rag.extract import extract
from tests.rag.helpers import make_pdf


def _chunks(name: str, data: bytes, max_chars: int = 1200) -> list[tuple[str, str, int | None]]:
    doc = extract(name, data)
    return [
        (doc.text[c.start : c.end], c.heading, c.page)
        for c in chunk_document(doc, ChunkingOptions(max_chars))
    ]


def test_sections_become_chunks_with_their_heading_path() -> None:
    text = "# Guide\n\nIntro text.\n\n## Setup\n\nInstall it.\n\n## Use\n\nRun it.\n"
    chunks = _chunks("g.md", text.encode())
    assert chunks == [
        ("# Guide\n\nIntro text.", "Guide", None),
        ("## Setup\n\nInstall it.", "Guide > Setup", None),
        ("## Use\n\nRun it.", "Guide > Use", None),
    ]


def test_a_blanked_comment_does_not_count_toward_a_passages_size() -> None:
    history = "\n".join(f"changes:\n  - version: v{n}.0.0\n    pr-url: #{n}" for n in range(40))
    text = (
        f"# fs\n\n## `fs.lstat(path)`\n\n<!-- YAML\n{history}\n-->\n\n"
        "* `path` {string}\n\nRetrieves the stats of the symbolic link the path names.\n"
    )
    [(passage, heading, _)] = _chunks("fs.md", text.encode(), max_chars=300)
    assert heading == "fs > fs.lstat(path)"
    assert passage.startswith("# fs\n\n## `fs.lstat(path)`")
    assert passage.rstrip().endswith("Retrieves the stats of the symbolic link the path names.")


def test_heading_only_sections_join_the_next_one() -> None:
    chunks = _chunks("g.md", b"# Title\n\n## Part\n\nBody text.\n")
    assert chunks == [("# Title\n\n## Part\n\nBody text.", "Title > Part", None)]


def test_long_sections_are_packed_by_paragraph_within_the_limit() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 30 for i in range(12)]
    text = "# Long\n\n" + "\n\n".join(p.strip() for p in paragraphs) + "\n"
    chunks = _chunks("l.md", text.encode(), max_chars=400)
    assert len(chunks) > 3
    assert all(len(c) <= 400 + len("# Long\n\n") for c, _, _ in chunks)
    assert all(h == "Long" for _, h, _ in chunks)
    joined = " ".join(" ".join(c.split()) for c, _, _ in chunks)
    assert all(f"Paragraph {i} " in joined for i in range(12))


def test_one_huge_paragraph_is_split_at_sentences() -> None:
    text = " ".join(f"Sentence number {i} ends here." for i in range(100))
    chunks = _chunks("t.txt", text.encode(), max_chars=300)
    assert all(len(c) <= 300 for c, _, _ in chunks)
    assert all(c.endswith(".") for c, _, _ in chunks[:-1])


def test_a_long_list_of_entries_is_split_between_entries_not_after_a_tag() -> None:
    """An option table read as one ``tag: text`` line per option (an Info manual's, a manual
    page's) is one paragraph of lines: it is cut at a line end, so no entry loses its tag
    to the passage before it ("'-M', '--month-sort': " at one passage's end, its text in the
    next)."""
    entries = [
        f"\u2018-{letter}\u2019, \u2018--option-{letter}\u2019: Sort by rule {letter}. "
        + "Lines that compare equal keep their order. " * 5
        for letter in "abcdefgh"
    ]
    for name in ("s.txt", "s.md"):
        chunks = _chunks(name, ("Sorting\n\n" + "\n".join(entries)).encode(), max_chars=700)
        assert len(chunks) > 1
        for text, _, _ in chunks:
            lines = [line for line in text.splitlines() if line.strip() and line != "Sorting"]
            assert all(line.startswith("\u2018-") for line in lines), (name, text[:80])


def test_pdf_chunks_stay_on_their_page() -> None:
    chunks = _chunks("p.pdf", make_pdf([["alpha beta"], ["gamma delta"]]))
    assert [(c, p) for c, _, p in chunks] == [("alpha beta", 1), ("gamma delta", 2)]


def test_zero_limit_keeps_sections_whole() -> None:
    text = ("word " * 1000).strip()
    assert len(_chunks("t.txt", text.encode(), max_chars=0)) == 1


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="at least 100"):
        ChunkingOptions(max_chars=10)


_line = st.one_of(
    st.text(alphabet="abc xyz.\t", min_size=0, max_size=40),
    st.sampled_from(["# H1", "## H2", "### H3", "", "```", "---", "Text ==="]),
)


_SPACES_AFTER_AN_OPEN_FENCE = [
    *("a", "a" * 7, "```", "", "", "a", "a", "aa", "a" * 5, "a" * 6, "a" * 8, "a" * 17),
    *("a" * 17, "# H1", "## H2", "### H3", " ", "a"),
]
"""A code block left open, split after a line of only spaces: no piece starts with that line."""


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_line, max_size=40), limit=st.sampled_from([0, 100, 250]))
@example(lines=_SPACES_AFTER_AN_OPEN_FENCE, limit=100)
def test_chunks_are_exact_ordered_non_overlapping_slices(lines: list[str], limit: int) -> None:
    """For any Markdown, every chunk is the file's text at its offsets, in order, without overlap;
    only a piece of a split code block may open with its line's indentation."""
    text = "\n".join(lines)
    doc = extract("p.md", text.encode())
    spans = chunk_document(doc, ChunkingOptions(limit))
    last_end = 0
    for span in spans:
        assert 0 <= last_end <= span.start < span.end <= len(text)
        piece = text[span.start : span.end]
        assert piece == piece.rstrip() and piece.lstrip(" \t") == piece.strip() and piece.strip()
        last_end = span.end
    covered = "".join(text[s.start : s.end] for s in spans)
    assert "".join(covered.split()) == "".join(text[doc.body_start :].split())


def _code_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def test_a_code_block_that_fits_is_kept_whole_blank_lines_and_all() -> None:
    code = "def first():\n    return 1\n\n\ndef second():\n    return 2"
    text = "# Code\n\n" + "Intro words here. " * 20 + "\n\n```python\n" + code + "\n```\n"
    chunks = _chunks("c.md", text.encode(), max_chars=400)
    assert any(code in c for c, _, _ in chunks)


def test_a_long_code_block_is_split_only_at_line_ends() -> None:
    lines = [f"    ffi_type **argtypes_{i} = &table[{i}]; /* slot {i} */" for i in range(60)]
    html = "<h1>Code</h1><pre>" + "\n".join(lines) + "</pre><p>After.</p>"
    doc = extract("c.html", html.encode())
    chunks = chunk_document(doc, ChunkingOptions(300))
    assert len(chunks) > 3
    seen = [line for c in chunks for line in _code_lines(doc.text[c.start : c.end])]
    assert [line.strip() for line in seen if "argtypes" in line] == [x.strip() for x in lines]
    for c in chunks:
        for line in _code_lines(doc.text[c.start : c.end]):
            assert line.strip() in {x.strip() for x in lines} | {"Code", "After."}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abc*[]{}();= _\t", min_size=0, max_size=60), min_size=1, max_size=40
    ),
    st.integers(min_value=100, max_value=600),
)
def test_for_any_code_block_every_chunk_holds_whole_lines(lines: list[str], limit: int) -> None:
    body = "\n".join(line.replace("```", "") for line in lines)
    text = "# T\n\nSome prose.\n\n```\n" + body + "\n```\n"
    doc = extract("p.md", text.encode())
    start, end = doc.code[0]
    long_line = len(max(lines, key=len)) > limit
    for c in chunk_document(doc, ChunkingOptions(limit)):
        if start < c.start < end and not long_line:  # only indentation before it on its line
            assert not text[text.rfind("\n", 0, c.start) + 1 : c.start].strip()
        if start < c.end < end and not long_line:  # only spaces after it on its line
            assert not text[c.end : text.find("\n", c.end)].strip()
