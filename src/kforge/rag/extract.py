"""Turn a file's bytes into plain text with its headings and pages, keeping exact offsets.

Markdown and text are kept verbatim, so a chunk's offsets point into the file itself; HTML and
PDF offsets point into the text extracted from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import PurePath

__all__ = [
    "FORMATS",
    "ExtractedDocument",
    "ExtractionError",
    "PageSpan",
    "Section",
    "decode_text",
    "detect_text",
    "extract",
    "format_of",
    "title_from_filename",
]

FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".rst": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
"""File suffix (lower case) to format name; other files are skipped."""


class ExtractionError(Exception):
    """The file cannot be read as its format; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Section:
    start: int
    """Offset where the heading begins."""
    body_start: int
    """Offset just after the heading line."""
    level: int
    heading: str
    """The heading path, e.g. ``Guide > Setup``."""


@dataclass(frozen=True, slots=True)
class PageSpan:
    start: int
    end: int
    number: int
    """1-based page number."""


@dataclass(frozen=True, slots=True)
class ExtractedDocument:
    text: str
    title: str
    format: str
    sections: tuple[Section, ...] = ()
    pages: tuple[PageSpan, ...] = ()
    body_start: int = 0
    """Offset where indexable content begins (after front matter)."""
    extra: dict[str, str] = field(default_factory=dict)


def format_of(path: str | PurePath) -> str | None:
    """The format name for a file name, or None when the suffix is not supported."""
    return FORMATS.get(PurePath(path).suffix.lower())


def title_from_filename(path: str | PurePath) -> str:
    stem = PurePath(path).stem
    words = re.sub(r"[_\-]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else stem


def decode_text(data: bytes) -> str:
    """Decode text: UTF-8 (a leading BOM is dropped), else its detected encoding (see
    ``detect_text``); binary content is refused."""
    return detect_text(data)[0]


def detect_text(data: bytes) -> tuple[str, str]:
    """The text and the encoding it was read with: ``utf-8``, ``utf-16`` after its BOM, else
    cp1252, else Latin-1. A fixed order, not a detector: the same bytes read the same on every
    machine (statistical detection misreads short Western text, e.g. as UTF-16 CJK)."""
    for bom, codec in ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            try:
                return data[2:].decode(codec), "utf-16"
            except UnicodeDecodeError:
                break
    if b"\x00" in data[:8192]:
        raise ExtractionError(
            "binary content (NUL bytes); only text, Markdown, HTML and PDF are read"
        )
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def extract(path: str | PurePath, data: bytes) -> ExtractedDocument:
    """Extract ``data`` read from ``path`` by the format its suffix names."""
    fmt = format_of(path)
    if fmt in ("markdown", "text", "html"):
        text, encoding = detect_text(data)
        document = _extract_text(fmt, text, title_from_filename(path))
        if encoding != "utf-8":
            document = replace(document, extra={**document.extra, "encoding": encoding})
        return document
    if fmt == "pdf":
        from kforge.rag.extract_pdf import extract_pdf

        return extract_pdf(data, title_from_filename(path))
    raise ExtractionError(
        f"unsupported format '{PurePath(path).suffix or '(no suffix)'}'; "
        f"supported: {', '.join(sorted(FORMATS))}"
    )


def _extract_text(fmt: str, text: str, title: str) -> ExtractedDocument:
    if fmt == "markdown":
        return extract_markdown(text, title)
    if fmt == "html":
        from kforge.rag.extract_html import extract_html

        return extract_html(text, title)
    return ExtractedDocument(text, title, "text")


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$|^ {0,3}(#{1,6})[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[*_`]+")


def _clean_heading(raw: str) -> str:
    return " ".join(_EMPHASIS.sub("", _INLINE_LINK.sub(r"\1", raw)).split())


def extract_markdown(text: str, fallback_title: str) -> ExtractedDocument:
    """Markdown as-is, with ATX and setext headings found outside code fences."""
    front = _FRONT_MATTER.match(text)
    body_start = front.end() if front else 0
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    prev_start = -1
    prev_line = ""
    offset = body_start
    for line in text[body_start:].splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        stripped = line.rstrip("\r\n")
        fence_match = _FENCE.match(stripped)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
            prev_line = ""
            continue
        if fence_match:
            fence = fence_match.group(1)
            prev_line = ""
            continue
        level, heading, heading_start = 0, "", start
        atx = _ATX.match(stripped)
        setext = _SETEXT.match(stripped)
        if atx:
            level = len(atx.group(1) or atx.group(3))
            heading = _clean_heading(atx.group(2) or "")
        elif (
            setext
            and prev_line.strip()
            and not _SETEXT.match(prev_line)
            and not _ATX.match(prev_line)
        ):
            level = 1 if setext.group(1)[0] == "=" else 2
            heading = _clean_heading(prev_line)
            heading_start = prev_start
        if level and heading:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
            path = " > ".join(h for _, h in stack)
            sections.append(Section(heading_start, offset, level, path))
            prev_line = ""
        else:
            prev_line = stripped
        prev_start = start
    first_h1 = next((s.heading for s in sections if s.level == 1), "")
    title = first_h1 or (sections[0].heading.split(" > ")[0] if sections else fallback_title)
    return ExtractedDocument(text, title, "markdown", tuple(sections), body_start=body_start)
