from __future__ import annotations

import pytest

from kforge.rag.extract import ExtractionError, extract
from tests.rag.helpers import make_pdf


def test_pages_are_extracted_with_spans() -> None:
    data = make_pdf([["First page text", "more words"], ["Second page here"]], title="Report")
    doc = extract("r.pdf", data)
    assert doc.title == "Report"
    assert [p.number for p in doc.pages] == [1, 2]
    first, second = doc.pages
    assert "First page text" in doc.text[first.start : first.end]
    assert doc.text[second.start : second.end] == "Second page here"


def test_title_falls_back_to_file_name() -> None:
    assert extract("annual_report.pdf", make_pdf([["x y z"]])).title == "Annual report"


def test_broken_pdf_is_refused() -> None:
    with pytest.raises(ExtractionError, match="broken PDF"):
        extract("bad.pdf", b"%PDF-1.4\nthis is not really a pdf")


def test_pdf_without_text_is_refused_with_advice() -> None:
    with pytest.raises(ExtractionError, match=r"no extractable text.*OCR"):
        extract("scan.pdf", make_pdf([[]]))
