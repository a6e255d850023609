"""A page whose text is typed into ``<pre>`` blocks (a manual kept as plain text and shown as
HTML, HAProxy's among them): those blocks are its paragraphs, lists and entries, not code.

A ``<pre>`` is such text when it reads as prose (lines of words, sentences ending in full
stops, nothing that looks like code: no braces, assignments, prompts or tags) and the page
says so (its class is ``text``) or most of the page's text is in such blocks. An example of
prose shown verbatim in an ordinary page (an error message, a template) stays code.
"""

from __future__ import annotations

import re

from kforge.rag.extract.document import TextBlock
from kforge.rag.extract.html_tree import Node

__all__ = ["prose_blocks", "reads_as_prose", "text_pres"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
_CODE_LINE = re.compile(
    r"^\s*(?:\$ |>>>|#|//|/\*|\*/|[{}\[\]]|</|<[A-Za-z!?][^>]*>\s*(?:<|$))|[;{}]\s*$"
    r"|\s(?:=|==|:=|->|=>)\s"
)
_SENTENCE_END = re.compile(r"[a-z)\]][.!?](?:\s|$)")
_ITEM = re.compile(r"^(\s*)(?:[-*+o]|\d{1,2}[.)])\s+\S")
_TERM = re.compile(r"^(\S+(?: \S+)?)\s{2,}(\S.*)$")
_MAJORITY = 0.5
"""Share of a page's text in prose blocks that makes them its text, whatever their class."""


def reads_as_prose(text: str) -> bool:
    """True when ``text`` (a ``<pre>``'s) is lines of sentences, not code or a listing."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2 or any(_CODE_LINE.search(line) for line in lines):
        return False
    wordy = 0
    for line in lines:
        stripped = line.strip()
        words = _WORD.findall(stripped)
        if _ITEM.match(line) and len(words) >= 2:
            wordy += 1  # "- stats uri : /haproxy?stats": an item of a list the text gives
        elif len(words) >= 4 and sum(map(len, words)) + stripped.count(" ") >= 0.85 * len(stripped):
            wordy += 1
    return wordy >= 0.8 * len(lines) and len(_SENTENCE_END.findall(text)) >= 1


def text_pres(pres: list[tuple[Node, str]], page_chars: int) -> set[int]:
    """The ids of the ``<pre>`` nodes (with their raw text) that are the page's text."""
    prose = [(node, raw) for node, raw in pres if reads_as_prose(raw)]
    typed = {id(node) for node, _ in prose if "text" in node.attrs.get("class", "").split()}
    if sum(len(raw) for _, raw in prose) >= _MAJORITY * max(page_chars, 1):
        return {id(node) for node, _ in prose}
    return typed


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def prose_blocks(text: str) -> list[TextBlock]:
    """Paragraphs of ``text`` with their wrapped lines joined; a list's items and entries
    set out with a hanging indent ("roundrobin  Each server is used in turns ..." over
    several lines) are one line each, an entry as ``term: text``."""
    blocks: list[TextBlock] = []
    for paragraph in re.split(r"\n[ \t]*\n", text):
        lines = [line.rstrip() for line in paragraph.split("\n") if line.strip()]
        if not lines:
            continue
        first = _indent(lines[0])
        hanging = any(_indent(line) > first for line in lines[1:])
        listed = any(_ITEM.match(line) for line in lines)
        if not hanging and not listed:
            blocks.append(TextBlock("p", " ".join(line.strip() for line in lines)))
            continue
        items: list[list[str]] = []
        lead: list[str] = []  # what a list's paragraph says before its first item
        for line in lines:
            bullet = _ITEM.match(line) is not None
            starts = bullet or (hanging and not listed and _indent(line) <= first)
            if listed and not items and not bullet:
                lead.append(line.strip())
            elif starts or not items:
                items.append([line.strip()])
            else:
                items[-1].append(line.strip())
        if lead:
            blocks.append(TextBlock("p", " ".join(lead)))
        for item in items:
            head = _TERM.match(item[0]) if hanging and not listed else None
            words = " ".join(item)
            if head:
                words = f"{head.group(1)}: {' '.join([head.group(2), *item[1:]])}"
            blocks.append(TextBlock("line", words))
    return blocks
