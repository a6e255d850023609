"""Visible text of an HTML page, one paragraph per block element, with its headings.

The one HTML reader: ingestion and the page-fetch tool both use it."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from kforge.rag.extract import ExtractedDocument, ExtractionError, Section

__all__ = ["extract_html"]

# Page chrome (menus, footers, forms) is left out with what a browser does not show.
_HIDDEN = frozenset(
    {"script", "style", "noscript", "template", "svg", "iframe", "object", "nav", "footer", "form"}
)
_BLOCKS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
        "caption",
    ]
)
_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
_SPACE = re.compile(r"\s+")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0
        self.hidden_depth = 0
        self.in_head = False
        self.pre_depth = 0
        self.pending_break = ""
        self.title_parts: list[str] | None = None
        """Text of the <title> being read; None outside it."""
        self.title = ""
        self.heading: tuple[int, int, list[str]] | None = None
        """(level, start offset, collected text) of the heading being read."""
        self.raw_sections: list[tuple[int, int, int, str]] = []

    def _append(self, text: str) -> None:
        if not text:
            return
        if self.length:
            if self.pending_break:
                self.parts.append(self.pending_break)
                self.length += len(self.pending_break)
                text = text.lstrip() if not self.pre_depth else text
            elif self.parts[-1].endswith((" ", "\n")):
                text = text.lstrip(" ") if not self.pre_depth else text
        else:
            text = text.lstrip()
        self.pending_break = ""
        if text:
            self.parts.append(text)
            self.length += len(text)

    def _break(self, kind: str) -> None:
        if kind == "\n\n" or not self.pending_break:
            self.pending_break = kind

    def _finish_title(self) -> None:
        if self.title_parts is not None:
            if not self.title:
                self.title = " ".join("".join(self.title_parts).split())
            self.title_parts = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title:
            self.title_parts = []
            return
        self._finish_title()  # an unclosed <title> ends where the next element starts
        if tag in ("head", "body"):
            self.in_head = tag == "head"  # </head> may be omitted: <body> ends the head too
            return
        if tag in _HIDDEN:
            if tag not in _VOID:
                self.hidden_depth += 1
            return
        if self.hidden_depth:
            return
        if tag == "br":
            self._break("\n")
        elif tag in _BLOCKS:
            self._break("\n\n")
        if tag == "pre":
            self.pre_depth += 1
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.heading = (int(tag[1]), -1, [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title_parts is not None:
            self._finish_title()
            return
        if tag == "head":
            self.in_head = False
            return
        if tag in _HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
            return
        if self.hidden_depth:
            return
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
        heading = self.heading
        if heading is not None and tag == f"h{heading[0]}":
            level, start, words = heading
            text = " ".join("".join(words).split())
            if text and start >= 0:
                self.raw_sections.append((start, self.length, level, text))
            self.heading = None
        if tag in _BLOCKS:
            self._break("\n\n")

    def handle_data(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(data)
            return
        if self.hidden_depth or self.in_head:
            return
        text = data if self.pre_depth else _SPACE.sub(" ", data)
        if not text.strip() and not self.pre_depth:
            if self.length and not self.pending_break and not self.parts[-1].endswith(" "):
                self._append(" ")
            return
        self._append(text)
        if self.heading is not None:
            level, start, words = self.heading
            if start < 0:
                stripped = text.lstrip()
                start = self.length - len(stripped) if stripped else -1
            self.heading = (level, start, [*words, text])


def extract_html(html: str, fallback_title: str) -> ExtractedDocument:
    """Visible text of ``html``; scripts, styles, the head and page chrome are left out."""
    collector = _TextCollector()
    try:
        collector.feed(html)
        collector.close()
    except Exception as exc:  # html.parser is lenient; anything it still rejects is a broken file
        raise ExtractionError(f"unreadable HTML ({type(exc).__name__}: {exc})") from None
    text = "".join(collector.parts)
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    for start, body_start, level, heading in collector.raw_sections:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        sections.append(Section(start, body_start, level, " > ".join(h for _, h in stack)))
    first_h1 = next((s.heading for s in sections if s.level == 1), "")
    title = collector.title or first_h1 or fallback_title
    return ExtractedDocument(text, title, "html", tuple(sections))
