"""Turn a file's bytes into plain text with its headings and pages, keeping exact offsets.

Markdown and text keep their length, so a chunk's offsets point into the file itself: what a
Markdown page shows no reader (HTML comments, link-reference definitions, badge lines) is
blanked with spaces, newlines kept, as are a text file's table of contents and ASCII-art
banner. HTML, AsciiDoc, manual pages, Info manuals and PDF offsets point into the text
extracted from them. Each format has a module here (``markdown``, ``plain``, ``html``,
``asciidoc``, ``man``, ``info``, ``pdf``), imported the first time a file of its format is
read; ``document`` holds what they share.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from pathlib import PurePath

from kforge.rag.extract.document import (
    EXTRACTION_VERSION,
    FORMATS,
    SUPPORTED,
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
    plain_name,
    title_from_filename,
)

MAX_UNCOMPRESSED_BYTES = 64 * 1024 * 1024
"""A gzip-compressed file that holds more than this is refused (as a larger file is skipped)."""

__all__ = [
    "EXTRACTION_VERSION",
    "FORMATS",
    "MAX_UNCOMPRESSED_BYTES",
    "SUPPORTED",
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
    "plain_name",
    "title_from_filename",
]


def extract(path: str | PurePath, data: bytes) -> ExtractedDocument:
    """Extract ``data`` read from ``path`` by the format its name says (see ``format_of``),
    decompressing it first when the name ends in ``.gz``."""
    fmt = format_of(path)
    if fmt is not None and plain_name(path) != PurePath(path):
        data = _gunzip(data)
    if fmt == "info":
        from kforge.rag.extract.info import without_marks

        data = without_marks(data)
    if fmt in ("markdown", "text", "html", "asciidoc", "man", "info"):
        text, encoding = detect_text(data)
        document = _extract_text(fmt, text, title_from_filename(path))
        if encoding != "utf-8":
            document = replace(document, extra={**document.extra, "encoding": encoding})
        return document
    if fmt == "pdf":
        from kforge.rag.extract.pdf import extract_pdf

        return extract_pdf(data, title_from_filename(path))
    raise ExtractionError(
        f"unsupported format '{PurePath(path).suffix or '(no suffix)'}'; supported: {SUPPORTED}"
    )


def _gunzip(data: bytes) -> bytes:
    """The content of a gzip file (every member of it), refused when corrupt or too large."""
    out: list[bytes] = []
    size = 0
    try:
        while data:
            inflater = zlib.decompressobj(wbits=31)
            chunk = inflater.decompress(data, MAX_UNCOMPRESSED_BYTES + 1 - size)
            size += len(chunk)
            out.append(chunk)
            if size > MAX_UNCOMPRESSED_BYTES:
                raise ExtractionError(
                    f"compressed file holds more than {MAX_UNCOMPRESSED_BYTES // 1_048_576} MiB"
                )
            if not inflater.eof:
                raise ExtractionError("truncated gzip file: decompress it and check it")
            data = inflater.unused_data
    except zlib.error as exc:
        raise ExtractionError(f"not a readable gzip file ({exc})") from None
    return b"".join(out)


def _extract_text(fmt: str, text: str, title: str) -> ExtractedDocument:
    if fmt == "info":
        from kforge.rag.extract.info import extract_info

        return extract_info(text, title)
    if fmt == "man":
        from kforge.rag.extract.man import extract_man

        return extract_man(text, title)
    if fmt == "markdown":
        from kforge.rag.extract.markdown import extract_markdown

        return extract_markdown(text, title)
    if fmt == "html":
        from kforge.rag.extract.html import extract_html

        return extract_html(text, title)
    from kforge.rag.extract.asciidoc import extract_asciidoc, looks_like_asciidoc

    if fmt == "asciidoc" or looks_like_asciidoc(text):
        return extract_asciidoc(text, title)
    from kforge.rag.extract.plain import extract_plain

    return extract_plain(text, title)
