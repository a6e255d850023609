"""Text of a PDF page by page (pypdf), with the outline's titles as headings."""

from __future__ import annotations

import io
import logging
from typing import Any

from kforge.extras import require_extra
from kforge.rag.extract.document import ExtractedDocument, ExtractionError, PageSpan, Section

__all__ = ["PAGE_SEPARATOR", "extract_pdf"]

PAGE_SEPARATOR = "\n\n"


def _outline_sections(reader: Any, pages: list[PageSpan]) -> tuple[Section, ...]:
    """One section per top-level outline entry, placed at the start of its page."""
    try:
        outline = reader.outline
    except Exception:  # a damaged outline should not cost the text
        return ()
    found: list[tuple[int, str]] = []
    for entry in outline:
        if isinstance(entry, list):
            continue
        try:
            number = reader.get_destination_page_number(entry) + 1
            title = " ".join(str(entry.title).split())
        except Exception:
            continue
        if title and 1 <= number <= len(pages):
            found.append((number, title))
    found.sort(key=lambda item: item[0])
    return tuple(Section(pages[n - 1].start, pages[n - 1].start, 1, title) for n, title in found)


def extract_pdf(data: bytes, fallback_title: str) -> ExtractedDocument:
    """The text of every page, pages joined by a blank line; offsets count from page 1."""
    require_extra("pdf", "reading PDF files")
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("encrypted PDF; save an unencrypted copy and ingest that")
        page_texts = [(page.extract_text() or "") for page in reader.pages]
    except ExtractionError:
        raise
    except Exception as exc:
        raise ExtractionError(f"broken PDF ({type(exc).__name__}: {exc})") from None
    parts: list[str] = []
    pages: list[PageSpan] = []
    offset = 0
    for number, raw in enumerate(page_texts, start=1):
        text = raw.strip()
        if parts:
            parts.append(PAGE_SEPARATOR)
            offset += len(PAGE_SEPARATOR)
        parts.append(text)
        pages.append(PageSpan(offset, offset + len(text), number))
        offset += len(text)
    text = "".join(parts)
    if not text.strip():
        raise ExtractionError(
            "no extractable text (a scanned PDF?); run OCR on it first, then ingest the result"
        )
    title = fallback_title
    try:
        meta_title = reader.metadata.title if reader.metadata else None
        if meta_title and str(meta_title).strip():
            title = " ".join(str(meta_title).split())
    except Exception:
        pass
    return ExtractedDocument(text, title, "pdf", _outline_sections(reader, pages), tuple(pages))
