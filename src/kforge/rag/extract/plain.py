"""Plain text read for its outline: numbered headings ("1. Philosophy", "1.1 What is cURL?")
as sections, their table of contents and ASCII-art banners blanked.

The text keeps its length (what shows nothing is replaced by spaces, newlines kept), so
offsets point into the file, as for Markdown. A line is a heading when it is a paragraph of
its own, numbered after the heading before it in outline order (1, 1.1, 1.2, 2, 2.1, ...;
numbers may be skipped), and reads as a title (not a sentence ending in a full stop; a
top-level one starts with a capital): so a numbered list of steps inside a section
("1. copy a suitable lib/config-*.h file") stays text. A document with fewer than three such
headings has none. A paragraph of numbered lines whose titles are headings further on is
their table of contents.
"""

from __future__ import annotations

import re

from kforge.rag.extract.document import ExtractedDocument, Section

__all__ = ["extract_plain"]

_NUMBERED = re.compile(r"^[ \t]{0,4}(\d{1,3}(?:\.\d{1,3}){0,3})\.?[ \t]+(\S.{0,118}?)[ \t]*$")
_MIN_HEADINGS = 3
_BANNER_LINES = 3
"""Consecutive lines without a letter or digit that make an ASCII-art banner (a logo)."""


def _paragraphs(text: str) -> list[list[tuple[int, int]]]:
    """Paragraphs as lists of (start, end) offsets of their lines, blank lines between."""
    paragraphs: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    at = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if body.strip():
            current.append((at, at + len(body)))
        elif current:
            paragraphs.append(current)
            current = []
        at += len(line)
    if current:
        paragraphs.append(current)
    return paragraphs


def _follows(number: tuple[int, ...], last: tuple[int, ...] | None) -> bool:
    """Whether ``number`` comes after ``last`` in an outline (a child of it, its next
    sibling or the next sibling of one of its parents)."""
    if last is None:
        return number[0] <= 1 and len(number) <= 2
    depth = len(number)
    if depth == len(last) + 1:
        return number[:-1] == last
    if depth > len(last):
        return False
    return number[:-1] == last[: depth - 1] and number[-1] > last[depth - 1]


def _is_title(title: str, depth: int) -> bool:
    if title.endswith((".", ",", ";", ":")) and not title.endswith("..."):
        return False
    return depth > 1 or title[:1].isupper() or title[:1].isdigit()


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] not in "\r\n":
            chars[i] = " "


def extract_plain(text: str, title: str) -> ExtractedDocument:
    """``text`` with its numbered headings as sections (see the module's docstring)."""
    paragraphs = _paragraphs(text)
    headings: list[tuple[int, int, tuple[int, ...], str]] = []
    last: tuple[int, ...] | None = None
    for lines in paragraphs:
        if len(lines) != 1:
            continue
        start, end = lines[0]
        match = _NUMBERED.match(text[start:end])
        if not match:
            continue
        number = tuple(int(n) for n in match.group(1).split("."))
        if _follows(number, last) and _is_title(match.group(2), len(number)):
            headings.append((start, end, number, match.group(2)))
            last = number
    chars = list(text)
    changed = False
    for lines in paragraphs:  # a logo drawn in characters
        run: list[tuple[int, int]] = []
        for start, end in [*lines, (-1, -1)]:
            line = text[start:end] if start >= 0 else "a"
            if not any(c.isalnum() for c in line):
                run.append((start, end))
                continue
            drawn = {c for lo, hi in run for c in text[lo:hi]} - {" ", "\t"}
            if len(run) >= _BANNER_LINES and len(drawn) > 2:
                for lo, hi in run:
                    _blank(chars, lo, hi)
                changed = True
            run = []
    if len(headings) < _MIN_HEADINGS:
        headings = []
    titles = {heading for _, _, _, heading in headings}
    first = headings[0][0] if headings else len(text)
    for lines in paragraphs:  # the table of contents: numbered lines naming the headings
        if lines[0][0] >= first:
            break
        entries = [_NUMBERED.match(text[s:e]) for s, e in lines]
        named = sum(1 for m in entries if m and m.group(2) in titles)
        if all(entries) and named * 2 >= len(lines) and (len(lines) > 1 or named):
            for lo, hi in lines:
                _blank(chars, lo, hi)
            changed = True
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    for start, end, number, _ in headings:
        label = text[start:end].strip()
        while path and path[-1][0] >= len(number):
            path.pop()
        path.append((len(number), label))
        sections.append(Section(start, end, len(number), " > ".join(h for _, h in path)))
    rendered = "".join(chars) if changed else text
    return ExtractedDocument(rendered, title, "text", tuple(sections))
