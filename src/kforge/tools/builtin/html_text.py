"""Readable text from HTML with the standard library: title, paragraphs, no scripts or chrome."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = ["ReadableText", "html_to_text"]

_SKIP = {
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "head",
    "nav",
    "footer",
    "form",
    "iframe",
}
_BLOCK = {
    "p", "div", "section", "article", "main", "header", "aside", "br", "li", "ul", "ol", "tr",
    "table", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "dd", "dt", "figcaption",
}  # fmt: skip
_VOID = {"br", "img", "hr", "meta", "link", "input", "source", "wbr", "area", "base", "col"}


@dataclass(frozen=True, slots=True)
class ReadableText:
    title: str
    text: str


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.skip_depth = 0
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIP and tag not in _VOID:
            self.skip_depth += 1
        if tag in _BLOCK:
            self.parts.append("\n")
        if tag in ("h1", "h2", "h3") and not self.skip_depth:
            self.parts.append("#" * int(tag[1]) + " ")
        if tag == "li" and not self.skip_depth:
            self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIP and self.skip_depth:
            self.skip_depth -= 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.skip_depth:
            self.parts.append(data)


def html_to_text(html: str) -> ReadableText:
    parser = _Extractor()
    parser.feed(html)
    parser.close()
    lines = []
    for line in "".join(parser.parts).splitlines():
        cleaned = re.sub(r"[ \t\r\f\v\xa0]+", " ", line).strip()
        if cleaned not in ("", "-", "#", "##", "###"):
            lines.append(cleaned)
    return ReadableText(title=" ".join("".join(parser.title).split()), text="\n".join(lines))
