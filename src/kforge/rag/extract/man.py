"""A manual page (troff with the man(7) macros) rendered to the text ``man`` shows.

``.SH`` and ``.SS`` are headings under the page's name; ``.TP`` and ``.IP`` entries are
``tag: text`` lines (a bullet's item is the item alone); ``.nf`` / ``.fi`` and ``.EX`` /
``.EE`` blocks are code, kept line by line; ``.TS`` tables are rows of cells. Font changes,
size changes and other escapes are dropped or turned into the character they name (``\\-``
is ``-``, ``\\(em`` is an em dash). Requests that only lay the page out (``.ad``, ``.in``,
``.ft``, ...), macro definitions and conditionals show nothing. A page that only includes
another (``.so``) is no document of its own; BSD's mdoc pages are read by ``mdoc``.
"""

from __future__ import annotations

import re

from kforge.rag.extract.document import (
    ExtractedDocument,
    ExtractionError,
    TextBlock,
    layout_blocks,
)
from kforge.rag.extract.mdoc import extract_mdoc
from kforge.rag.extract.troff import fold_short_sections, inline

__all__ = ["extract_man"]

_REQUEST = re.compile(r"^[.'][ \t]*([^ \t\\]*)[ \t]*(.*)$")
_ARGUMENT = re.compile(r'"((?:[^"]|"")*)"?|((?:\\.|[^\s\\])+\\?)')
_TAG_LENGTH = 100
"""The longest paragraph ``.RS`` makes the tag of the indented text after it."""
_BULLETS = {"\u2022", "*", "-", "o", "+", "\u00b7"}
_SKIP_UNTIL_DOTS = {"de", "de1", "am", "ig", "dei"}
_PARAGRAPH = {"PP", "LP", "P", "sp", "br", "HP", "RS", "RE", "PD", "in", "ti"}
_ALTERNATING = {"BR", "RB", "IR", "RI", "BI", "IB"}
_FONT = {"B", "I", "SM", "SB", "CW", "R"}
_NOFILL_START = {"nf", "EX", "Vb"}
_NOFILL_END = {"fi", "EE", "Ve"}


def _arguments(rest: str) -> list[str]:
    return [
        (quoted.replace('""', '"') if quoted is not None and bare == "" else bare)
        for quoted, bare in _ARGUMENT.findall(rest)
    ]


class _Renderer:
    def __init__(self) -> None:
        self.blocks: list[TextBlock] = []
        self.words: list[str] = []
        self.kind = "p"
        self.prefix = ""
        self.nofill: list[str] | None = None
        self.tag_next = False
        self.name = ""
        self.section = ""
        self.names_line = ""

    def flush(self) -> None:
        text = " ".join(" ".join(self.words).split())
        self.words = []
        if self.prefix and text:
            text = f"{self.prefix}: {text}"
        elif self.prefix:
            text = self.prefix
        if text:
            self.blocks.append(TextBlock(self.kind, text))
            if self.section.upper() == "NAME" and not self.names_line:
                self.names_line = text
        self.kind, self.prefix = "p", ""

    def text(self, line: str) -> None:
        if self.nofill is not None:
            self.nofill.append(line)
            return
        if self.tag_next:
            self.tag_next = False
            self.flush()
            self.kind, self.prefix = "line", line.strip()
            return
        if line[:1] in (" ", "\t") and self.words:
            self.flush()
        if line.strip():
            self.words.append(line.strip())
        elif self.words or self.prefix:
            self.flush()

    def heading(self, level: int, text: str) -> None:
        self.flush()
        text = " ".join(text.split())
        if text:
            self.blocks.append(TextBlock("h", text, level))
            if level == 2:
                self.section = text

    def end_nofill(self) -> None:
        if self.nofill is None:
            return
        lines, self.nofill = self.nofill, None
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines:
            self.blocks.append(TextBlock("pre", "\n".join(line.rstrip() for line in lines)))

    def indent(self) -> None:
        """``.RS`` after a short paragraph of its own (DocBook's ``-N, --intent-to-add``
        then the option's text, indented) makes that paragraph the tag of an entry."""
        tag = " ".join(" ".join(self.words).split())
        if self.kind == "p" and not self.prefix and 0 < len(tag) <= _TAG_LENGTH:
            self.words = []
            self.kind, self.prefix = "line", tag
        else:
            self.flush()

    def item(self, tag: str) -> None:
        self.flush()
        self.kind = "line"
        self.prefix = "" if tag.strip() in _BULLETS else tag.strip()


def _table(lines: list[str], start: int, renderer: _Renderer) -> int:
    """Rows of a ``.TS`` table from ``start`` (the line after ``.TS``), a line of cells each
    parted by " | " (as an HTML table's rows read);
    a ``T{`` ... ``T}`` cell is its text on one line. Returns the ``.TE`` line's index."""
    at, tab = start, "\t"
    options = re.search(r"tab\s*\((.)\)", lines[at]) if at < len(lines) else None
    if options:
        tab = options.group(1)

    def skip_format(at: int) -> int:
        while at < len(lines) and not lines[at].rstrip().endswith("."):
            at += 1
        return at + 1

    at = skip_format(at)
    renderer.flush()
    while at < len(lines) and not lines[at].startswith(".TE"):
        row = lines[at]
        at += 1
        if row.startswith(".T&"):
            at = skip_format(at)
            continue
        if row.startswith((".", "'")) or row.strip() in ("_", "=", ""):
            continue
        cells = row.split(tab)
        while cells[-1].strip() == "T{":
            block: list[str] = []
            while at < len(lines) and not lines[at].startswith("T}"):
                if not lines[at].lstrip().startswith((".", "'")):
                    block.append(lines[at])
                at += 1
            rest = lines[at][2:].split(tab) if at < len(lines) else [""]
            at += 1
            cells[-1] = " ".join(block)
            cells.extend(rest[1:])
        text = " | ".join(c for c in (" ".join(inline(cell).split()) for cell in cells) if c)
        if text:
            renderer.blocks.append(TextBlock("line", text))
    return at


def extract_man(text: str, fallback_title: str) -> ExtractedDocument:
    """``text`` (a man(7) page) rendered to plain text with its sections as headings."""
    lines = text.splitlines()
    requests = [m.group(1) for line in lines[:200] if (m := _REQUEST.match(line))]
    if "TH" not in requests:
        if {"Dd", "Dt", "Sh"} & set(requests):
            return extract_mdoc(text, fallback_title)
        include = next((line.split()[1:2] for line in lines if line.startswith(".so ")), None)
        if include:
            raise ExtractionError(
                f"a manual page that only includes {include[0]} (.so): that page holds its text"
            )
        raise ExtractionError("not a manual page: no .TH line; rename it if it is plain text")
    renderer = _Renderer()
    at = 0
    last_ie = False
    while at < len(lines):
        line = lines[at]
        at += 1
        request = _REQUEST.match(line) if line[:1] in (".", "'") else None
        if request is None:
            renderer.text(inline(line))
            continue
        name, rest = request.group(1), request.group(2)
        if name in ("", '\\"') or name.startswith('\\"'):
            continue
        if name in _SKIP_UNTIL_DOTS:
            while at < len(lines) and lines[at].strip() != "..":
                at += 1
            at += 1
        elif name in ("if", "ie", "el"):
            if name == "el":
                holds, body = not last_ie, rest
            else:
                condition, _, body = rest.partition(" ")
                holds = condition in ("n", "!t")
                last_ie = holds if name == "ie" else last_ie
            body = body.strip()
            if holds:  # the page as nroff (a terminal) shows it: the body is read as a line
                body = body.removeprefix("\\{").removesuffix("\\").strip()
                if body:
                    lines.insert(at, body)
            elif body.startswith("\\{"):
                while at < len(lines) and "\\}" not in lines[at - 1]:
                    at += 1
        elif name == "TH":
            args = _arguments(rest)
            renderer.name = inline(args[0]) if args else ""
            if renderer.name:
                renderer.heading(1, renderer.name)
        elif name in ("SH", "SS"):
            renderer.end_nofill()
            heading = inline(rest) if rest else inline(lines[at]) if at < len(lines) else ""
            if not rest:
                at += 1
            renderer.heading(2 if name == "SH" else 3, " ".join(_arguments(heading)))
        elif name in _NOFILL_START:
            renderer.flush()
            renderer.nofill = []
        elif name in _NOFILL_END:
            renderer.end_nofill()
        elif name == "TP":
            renderer.flush()
            renderer.tag_next = True
        elif name == "IP":
            args = _arguments(rest)
            renderer.item(inline(args[0]) if args else "")
        elif name == "RS" and renderer.nofill is None:
            renderer.indent()
        elif name in _PARAGRAPH:
            if renderer.nofill is None:
                renderer.flush()
        elif name in _ALTERNATING:
            renderer.text("".join(inline(a) for a in _arguments(rest)))
        elif name in _FONT:
            if rest:
                renderer.text(" ".join(inline(a) for a in _arguments(rest)))
        elif name in ("UR", "MT"):
            renderer.text(inline(rest))
        elif name in ("SY", "OP"):
            words = [inline(a) for a in _arguments(rest)]
            renderer.text(("[" + " ".join(words) + "]") if name == "OP" else " ".join(words))
        elif name == "TS":
            at = _table(lines, at, renderer) + 1
    renderer.end_nofill()
    renderer.flush()
    title = renderer.name or fallback_title
    named = renderer.names_line.split(" ", 1)[0].rstrip(",")
    if named and named.lower() == title.lower() and named != title:
        # "GIT-ADD" on the .TH line, "git-add - Add file contents" under NAME
        title = named
        first = renderer.blocks[0]
        if first.kind == "h" and first.level == 1:
            renderer.blocks[0] = TextBlock("h", named, 1)
    rendered, sections, code = layout_blocks(fold_short_sections(renderer.blocks))
    return ExtractedDocument(rendered, title, "man", sections, code=code)
