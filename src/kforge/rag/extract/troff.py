"""What troff's man(7) and mdoc(7) pages share once read: escapes turned into what they show,
and a section of one short paragraph read as a field of the section before it."""

from __future__ import annotations

import re

from kforge.rag.extract.document import TextBlock

__all__ = ["fold_short_sections", "inline"]

_NAMED = {
    "em": "\u2014",
    "en": "\u2013",
    "hy": "-",
    "mi": "-",
    "bu": "\u2022",
    "aq": "'",
    "dq": '"',
    "lq": "\u201c",
    "rq": "\u201d",
    "oq": "\u2018",
    "cq": "\u2019",
    "co": "\u00a9",
    "rg": "\u00ae",
    "tm": "\u2122",
    "mu": "\u00d7",
    "de": "\u00b0",
    "+-": "\u00b1",
    "<=": "\u2264",
    ">=": "\u2265",
    "!=": "\u2260",
    "->": "\u2192",
    "<-": "\u2190",
    "ti": "~",
    "ha": "^",
    "rs": "\\",
    "sl": "/",
    "ba": "|",
    "or": "|",
    "ga": "`",
    "aa": "\u00b4",
    "at": "@",
    "sh": "#",
    "Do": "$",
    "Eu": "\u20ac",
    "R": "\u00ae",
    "Tm": "\u2122",
}
_ESCAPE = re.compile(
    r"\\(?:"
    r"(?P<font>[fF](?:\[[^\]]*\]|\(..|.))"
    r"|(?P<size>s(?:[-+]?\d|\(\d\d|\[[^\]]*\]|[-+]\(\d\d))"
    r"|(?P<char>\(..|\[[^\]]+\])"
    r"|(?P<string>\*(?:\(..|\[[^\]]*\]|.))"
    r"|(?P<register>[ngkm](?:\(..|\[[^\]]*\]|.))"
    r"|(?P<quoted>[hvwlLDNXoSxZbBCRA]'[^']*')"
    r"|(?P<space>[ ~0]|\^|\|)"
    r"|(?P<literal>.)"
    r")"
)
_LITERAL = {"-": "-", "e": "\\", "\\": "\\", ".": ".", "'": "\u00b4", "`": "`", "t": "\t"}
_FIELD_LENGTH = 160
"""The longest one-paragraph section read as a field of the section before it."""


def _escape(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups["char"]:
        name = groups["char"][1:3] if groups["char"][0] == "(" else groups["char"][1:-1]
        if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
            return chr(int(name[1:], 16))
        return _NAMED.get(name, "")
    if groups["string"]:
        body = groups["string"][1:]
        name = body[1:3] if body[0] == "(" else body.strip("[]")
        return _NAMED.get(name, "")
    if groups["space"]:
        return " " if groups["space"] in " ~0" else ""
    if groups["literal"]:
        return _LITERAL.get(groups["literal"], "")
    return ""


def inline(text: str) -> str:
    """Troff text with its escapes turned into what they show."""
    comment = text.find('\\"')
    while comment >= 0 and _escaped(text, comment):
        comment = text.find('\\"', comment + 1)
    if comment >= 0:
        text = text[:comment]
    return _ESCAPE.sub(_escape, text)


def _escaped(text: str, at: int) -> bool:
    """Whether the backslash at ``at`` is itself escaped (``\\\\"`` is a backslash, a quote)."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def fold_short_sections(blocks: list[TextBlock]) -> list[TextBlock]:
    """A section whose whole body is one short paragraph reads as a field of the section
    before it: "DEFAULT: -1, unlimited", "RETURN VALUE: Returns CURLE_OK.", where a passage
    of their own would hold the value without the name of what it is the value of. NAME's
    line stays the page's opening line without the word NAME."""
    folded: list[TextBlock] = []
    at = 0
    while at < len(blocks):
        block = blocks[at]
        body = blocks[at + 1] if at + 1 < len(blocks) else None
        after = blocks[at + 2] if at + 2 < len(blocks) else None
        if (
            block.kind == "h"
            and block.level > 1
            and body is not None
            and body.kind in ("p", "line")
            and len(body.text) <= _FIELD_LENGTH
            and (after is None or (after.kind == "h" and after.level <= block.level))
        ):
            text = body.text if block.text.upper() == "NAME" else f"{block.text}: {body.text}"
            folded.append(TextBlock("line", text))
            at += 2
            continue
        folded.append(block)
        at += 1
    return folded
