"""Markdown as the file holds it, with what no reader sees blanked and its headings found.

HTML comments (``<!-- YAML added: v10.0.0 -->``), link-reference definitions
(``[`os.EOL`]: #oseol``), stability badges (``> Stability: 2 - Stable``) and image-only badge
lines are replaced by spaces, newlines kept, so the text keeps the file's offsets and a chunk
shows none of them, as is a code fence holding only file inclusions (``{!../src/app.py!}``).
Other code fences are left exactly as written.
"""

from __future__ import annotations

import re

from kforge.rag.extract.document import (
    ExtractedDocument,
    Section,
    clean_title,
    include_directives_only,
)

__all__ = ["blank_markup", "extract_markdown"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$|^ {0,3}(#{1,6})[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[*_`]+")


def _clean_heading(raw: str) -> str:
    return " ".join(_EMPHASIS.sub("", _INLINE_LINK.sub(r"\1", raw)).split())


_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"
_LINK_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*$")
_STABILITY_BADGE = re.compile(r"^ {0,3}> ?Stability: [0-9.]+ - [A-Za-z][A-Za-z -]*\.?[ \t]*$")
_WHOLE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n((?:[^\n]*\n)*?) {0,3}\1[ \t]*$", re.M)
_IMAGE_BADGES = re.compile(r"^[ \t]*(?:\[?!\[[^\]\n]*\]\([^)\n]*\)(?:\]\([^)\n]*\))?[ \t]*)+$")


def _blank(text: str) -> str:
    return "".join(c if c in "\r\n" else " " for c in text)


def _fence_step(fence: str | None, line: str) -> tuple[str | None, bool]:
    """The fence open after ``line``, and whether ``line`` is code or a fence line."""
    match = _FENCE.match(line)
    if fence is not None:
        closes = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
        return (None if closes else fence), True
    if match:
        return match.group(1), True
    return None, False


def blank_markup(text: str, start: int = 0) -> str:
    """``text`` with comments, link references and badge lines after ``start`` blanked."""
    out: list[str] = [text[:start]]
    fence: str | None = None
    comment = False
    for line in text[start:].splitlines(keepends=True):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if comment or fence is None:
            body, comment = _blank_comments(body, comment)
        fence, code = _fence_step(fence, body)
        if not code and (
            _LINK_REFERENCE.match(body) or _STABILITY_BADGE.match(body) or _IMAGE_BADGES.match(body)
        ):
            body = _blank(body)
        out.append(body + ending)
    return "".join(out[:1]) + _WHOLE_FENCE.sub(_blank_inclusions, "".join(out[1:]))


def _blank_inclusions(fence: re.Match[str]) -> str:
    return _blank(fence.group(0)) if include_directives_only(fence.group(2)) else fence.group(0)


def _blank_comments(line: str, inside: bool) -> tuple[str, bool]:
    """Blank the comment parts of one line; ``inside`` says a comment is open at its start."""
    parts: list[str] = []
    pos = 0
    while pos < len(line):
        if inside:
            end = line.find(_COMMENT_CLOSE, pos)
            if end < 0:
                parts.append(_blank(line[pos:]))
                return "".join(parts), True
            parts.append(_blank(line[pos : end + len(_COMMENT_CLOSE)]))
            pos = end + len(_COMMENT_CLOSE)
            inside = False
            continue
        begin = _comment_start(line, pos)
        if begin < 0:
            parts.append(line[pos:])
            break
        parts.append(line[pos:begin])
        pos = begin
        inside = True
    return "".join(parts), inside


def _comment_start(line: str, pos: int) -> int:
    """Where a comment opens at or after ``pos``, outside inline code spans; -1 if none."""
    begin = line.find(_COMMENT_OPEN, pos)
    while begin >= 0 and line.count("`", 0, begin) % 2:
        begin = line.find(_COMMENT_OPEN, begin + 1)
    return begin


def extract_markdown(text: str, fallback_title: str) -> ExtractedDocument:
    """Markdown with its furniture blanked (see ``blank_markup``) and its ATX and setext headings
    found outside code fences."""
    front = _FRONT_MATTER.match(text)
    body_start = front.end() if front else 0
    text = blank_markup(text, body_start)
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    prev_start = -1
    prev_line = ""
    offset = body_start
    code_spans: list[tuple[int, int]] = []
    code_start = 0
    for line in text[body_start:].splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        stripped = line.rstrip("\r\n")
        was_open = fence is not None
        fence, code = _fence_step(fence, stripped)
        if code:
            if not was_open:
                code_start = start
            elif fence is None:
                code_spans.append((code_start, start + len(stripped)))
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
    if fence is not None:
        code_spans.append((code_start, len(text.rstrip())))
    first_h1 = next((s.heading for s in sections if s.level == 1), "")
    full = first_h1 or (sections[0].heading.split(" > ")[0] if sections else fallback_title)
    title = clean_title(full) or full
    extra = {"full_title": full} if title != full else {}
    return ExtractedDocument(
        text,
        title,
        "markdown",
        tuple(sections),
        body_start=body_start,
        extra=extra,
        code=tuple(code_spans),
    )
