"""Turn a file's bytes into plain text with its headings and pages, keeping exact offsets.

Markdown and text keep their length, so a chunk's offsets point into the file itself: what a
Markdown page shows no reader (HTML comments, link-reference definitions, badge lines) is
blanked with spaces, newlines kept. HTML, AsciiDoc and PDF offsets point into the text
extracted from them. Each format has a module here (``markdown``, ``html``, ``asciidoc``,
``pdf``), imported the first time a file of its format is read; ``document`` holds what they
share.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath

from kforge.rag.extract.document import (
    EXTRACTION_VERSION,
    FORMATS,
    ExtractedDocument,
    ExtractionError,
    PageSpan,
    Section,
    TextBlock,
    clean_title,
    decode_text,
    detect_text,
    format_of,
    layout_blocks,
    title_from_filename,
)

__all__ = [
    "EXTRACTION_VERSION",
    "FORMATS",
    "ExtractedDocument",
    "ExtractionError",
    "PageSpan",
    "Section",
    "TextBlock",
    "clean_title",
    "decode_text",
    "detect_text",
    "extract",
    "format_of",
    "layout_blocks",
    "title_from_filename",
]


def extract(path: str | PurePath, data: bytes) -> ExtractedDocument:
    """Extract ``data`` read from ``path`` by the format its suffix names."""
    fmt = format_of(path)
    if fmt in ("markdown", "text", "html", "asciidoc"):
        text, encoding = detect_text(data)
        document = _extract_text(fmt, text, title_from_filename(path))
        if encoding != "utf-8":
            document = replace(document, extra={**document.extra, "encoding": encoding})
        return document
    if fmt == "pdf":
        from kforge.rag.extract.pdf import extract_pdf

        return extract_pdf(data, title_from_filename(path))
    raise ExtractionError(
        f"unsupported format '{PurePath(path).suffix or '(no suffix)'}'; "
        f"supported: {', '.join(sorted(FORMATS))}"
    )


def _extract_text(fmt: str, text: str, title: str) -> ExtractedDocument:
    if fmt == "markdown":
        from kforge.rag.extract.markdown import extract_markdown

        return extract_markdown(text, title)
    if fmt == "html":
        from kforge.rag.extract.html import extract_html

        return extract_html(text, title)
    from kforge.rag.extract.asciidoc import extract_asciidoc, looks_like_asciidoc

    if fmt == "asciidoc" or looks_like_asciidoc(text):
        return extract_asciidoc(text, title)
    return ExtractedDocument(text, title, "text")
