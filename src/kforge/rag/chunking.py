"""Split an extracted document into passages that follow its headings, paragraphs and pages."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kforge.rag.extract import ExtractedDocument

__all__ = ["ChunkSpan", "ChunkingOptions", "chunk_document"]

_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_SPACE = re.compile(r"\s+")
_LINE_END = re.compile(r"\n")
_BREAK = 2
"""What a break between two paragraphs of one passage counts toward its size."""


@dataclass(frozen=True, slots=True)
class ChunkingOptions:
    max_chars: int = 1200
    """Longest passage in characters (its paragraphs and a break between each two, however
    much blank space lies between them); paragraphs are packed up to it. 0 keeps each section
    whole."""

    def __post_init__(self) -> None:
        if self.max_chars < 0 or 0 < self.max_chars < 100:
            raise ValueError(
                f"max_chars must be 0 (no limit) or at least 100 (got {self.max_chars})"
            )

    @property
    def key(self) -> str:
        """Identifies the settings; a source chunked with other settings is chunked again."""
        return f"paragraphs-v4:{self.max_chars}"


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    start: int
    end: int
    heading: str
    page: int | None


@dataclass(frozen=True, slots=True)
class _Segment:
    start: int
    end: int
    body_start: int
    heading: str
    page: int | None


def _segments(doc: ExtractedDocument) -> list[_Segment]:
    """Cut the text at every heading and page boundary."""
    cuts: list[tuple[int, int, str]] = [(doc.body_start, doc.body_start, "")]
    for s in doc.sections:
        if s.start >= doc.body_start:
            cuts.append((s.start, s.body_start, s.heading))
    cuts.sort(key=lambda c: c[0])
    sections: list[_Segment] = []
    for i, (start, body, heading) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(doc.text)
        if end > start:
            sections.append(_Segment(start, end, body, heading, None))
    if not doc.pages:
        return sections
    pieces: list[_Segment] = []
    for seg in sections:
        for page in doc.pages:
            lo, hi = max(seg.start, page.start), min(seg.end, page.end)
            if hi > lo:
                pieces.append(
                    _Segment(lo, hi, max(lo, min(seg.body_start, hi)), seg.heading, page.number)
                )
    return pieces


_BLANK_LINES = re.compile(r"(?:[ \t]*\n)+")


def _blocks(
    text: str, start: int, end: int, code: tuple[tuple[int, int], ...] = ()
) -> list[tuple[int, int]]:
    """Paragraphs (runs of text between blank lines) of ``text[start:end]``, trimmed; the
    paragraphs of one code block (blank lines inside it) are one block."""
    blocks = []
    pos = start
    for match in _BLANK_LINE.finditer(text, start, end):
        blocks.append((pos, match.start()))
        pos = match.end()
    blocks.append((pos, end))
    trimmed = []
    for lo, hi in blocks:
        piece = text[lo:hi]
        lead = len(piece) - len(piece.lstrip())
        tail = len(piece) - len(piece.rstrip())
        if hi - tail > lo + lead:
            trimmed.append((lo + lead, hi - tail))
    merged: list[tuple[int, int]] = []
    for lo, hi in trimmed:
        if merged and any(
            merged[-1][1] > c_lo and merged[-1][0] < c_hi and lo < c_hi for c_lo, c_hi in code
        ):
            merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


def _in_code(lo: int, hi: int, code: tuple[tuple[int, int], ...]) -> bool:
    return any(c_lo < hi and lo < c_hi for c_lo, c_hi in code)


def _split_long(
    text: str, lo: int, hi: int, limit: int, code: bool = False
) -> list[tuple[int, int]]:
    """Split one over-long paragraph at line ends (a list's or a table's lines, an option's
    ``tag: text`` entries, stay whole), else at sentence ends, else at spaces, else anywhere;
    code at line ends only (a line longer than ``limit`` is cut like prose), keeping
    indentation."""
    pieces: list[tuple[int, int]] = []
    patterns = (_LINE_END, _SPACE) if code else (_LINE_END, _SENTENCE_END, _SPACE)
    while hi - lo > limit:
        window_end = lo + limit
        cut = -1
        for pattern in patterns:
            for match in pattern.finditer(text, lo + (1 if code else limit // 4), window_end):
                cut = match.start()
            if cut > lo:
                break
        if cut <= lo:
            cut = window_end
        end = cut
        while end > lo and text[end - 1].isspace():  # blank code lines before the cut
            end -= 1
        if end > lo:
            pieces.append((lo, end))
        lo = cut
        while lo < hi and text[lo] in ("\n" if code else " \t\r\n\f\v"):
            lo += 1
        blank = _BLANK_LINES.match(text, lo, hi) if code else None
        if blank:  # a code line of only spaces indents nothing after it
            lo = blank.end()
    if hi > lo:
        pieces.append((lo, hi))
    return pieces


def chunk_document(
    doc: ExtractedDocument, options: ChunkingOptions | None = None
) -> list[ChunkSpan]:
    """Passages of ``doc``; each lies within one section and one page.

    A heading stays with the paragraph after it, and a section that holds only its heading is
    joined to the next section on the same page, so no passage is a bare heading; such a
    passage may exceed ``max_chars`` by the heading's length. Blank space between paragraphs
    counts as one break, so a passage's span may be longer than what it says.
    """
    options = options or ChunkingOptions()
    limit = options.max_chars
    text = doc.text
    spans: list[ChunkSpan] = []
    carry: _Segment | None = None
    """A heading-only stretch waiting to be joined to the next passage."""
    for seg in _segments(doc):
        blocks = _blocks(text, seg.start, seg.end, doc.code)
        if not blocks:
            continue
        if carry is not None and carry.page != seg.page:
            spans.append(ChunkSpan(carry.start, carry.end, carry.heading, carry.page))
            carry = None
        if not text[seg.body_start : seg.end].strip():
            if carry is None:
                carry = _Segment(blocks[0][0], blocks[-1][1], seg.body_start, seg.heading, seg.page)
            else:
                carry = _Segment(carry.start, blocks[-1][1], seg.body_start, seg.heading, seg.page)
            continue
        if carry is not None:
            blocks[0] = (carry.start, blocks[0][1])
            carry = None
        units: list[tuple[int, int]] = []
        for lo, hi in blocks:
            if limit and hi - lo > limit:
                units.extend(_split_long(text, lo, hi, limit, _in_code(lo, hi, doc.code)))
            else:
                units.append((lo, hi))
        chunk_start, chunk_end = units[0]
        # a passage's size is what it says: the blank stretch a blanked comment leaves between
        # paragraphs (Node.js's YAML history) counts as one paragraph break, not as its length
        size = chunk_end - chunk_start
        for lo, hi in units[1:]:
            heading_only = chunk_end <= seg.body_start
            if limit and size + _BREAK + hi - lo > limit and not heading_only:
                spans.append(ChunkSpan(chunk_start, chunk_end, seg.heading, seg.page))
                chunk_start, size = lo, 0
            else:
                size += _BREAK
            size += hi - lo
            chunk_end = hi
        spans.append(ChunkSpan(chunk_start, chunk_end, seg.heading, seg.page))
    if carry is not None:
        spans.append(ChunkSpan(carry.start, carry.end, carry.heading, carry.page))
    return spans
