"""AsciiDoc rendered to the text a reader sees: titles as headings, ``term::`` entries as
``term: definition`` lines, list items and table rows as lines, listing blocks whole.

Markup that shows nothing is dropped: block attributes (``[verse]``, ``[[anchor]]``),
attribute entries, ``include::`` and conditional directives, comments and callout numbers in
code. ``linkgit:git-add[1]`` reads ``git-add(1)``. Covers what manuals written in AsciiDoc use
(git's among them), not the whole language.
"""

from __future__ import annotations

import re

from kforge.rag.extract.document import ExtractedDocument, TextBlock, clean_title, layout_blocks

__all__ = ["extract_asciidoc", "looks_like_asciidoc"]

_UNDERLINE_LEVEL = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_UNDERLINE = re.compile(r"^(=+|-+|~+|\^+|\++)[ \t]*$")
_ONE_LINE_TITLE = re.compile(r"^(={1,6})[ \t]+(\S.*?)(?:[ \t]+=+)?[ \t]*$")
_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|/{4,}|\+{4,}|={4,}|\*{4,}|_{4,})[ \t]*$")
_TABLE = re.compile(r"^[|!,]={3,}[ \t]*$")
_DIRECTIVE = re.compile(r"^(?:include|ifdef|ifndef|ifeval|endif)::")
_ATTRIBUTE_ENTRY = re.compile(r"^:!?[\w-]+!?:(?:[ \t].*)?$")
_BLOCK_ATTRIBUTES = re.compile(r"^\[(?:\[[^\]]*\]|[A-Za-z#.\"'][^\]]*)?\][ \t]*$")
_BLOCK_TITLE = re.compile(r"^\.([^\s.].*)$")
_CALLOUT_ITEM = re.compile(r"^<(\d+)>[ \t]+(.*)$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:\*{1,5}|-|\.{1,5}|\d+\.|[a-z]\.)[ \t]+(.*)$")
_TERM = re.compile(r"^[ \t]*(\S.*?)(?::{2,4}|;;)(?:[ \t]+(.*))?$")
_CALLOUT_IN_CODE = re.compile(r"(?:[ \t]+(?://|#|;;)[ \t]*<\d+>|[ \t]*<\d+>)+[ \t]*$")
_ANCHOR = re.compile(r"\[\[[^\]\n]*\]\]|\[#[\w-]+\]")
_LINKGIT = re.compile(r"linkgit:([\w.-]+)\[(\d+)\]")
_LINK = re.compile(r"((?:https?|ftp|mailto|file):[^\s\[]*)\[([^\]]*)\]")
_BARE_LINK = re.compile(r"link:([^\s\[]+)\[([^\]]*)\]")
_XREF = re.compile(r"<<([^,>]+)(?:,[ \t]*([^>]+))?>>")
_EMPHASIS = re.compile(r"(?<![\w\\'`])'(\S(?:[^'\n]*?\S)?)'(?![\w'])")
_STRONG = re.compile(r"(?<![\w\\*])\*(\S(?:[^*\n]*?\S)?)\*(?![\w*])")
_QUOTED = re.compile(r"``(.+?)''")
_OLD_QUOTED = re.compile(r"(?<![`\w])`([^`'\n]+)''")
_OLD_SINGLE_QUOTED = re.compile(r"(?<![`\w])`([^`'\n]+)'(?![\w'])")
_MONOSPACE = re.compile(r"(?<![\w\\])`([^`\n]+)`(?!\w)")
_INDEX_TERMS = re.compile(r"\(\(\((?:[^)]|\)(?!\)\)))*\)\)\)")
_INDEX_TERM = re.compile(r"\(\(([^()]+)\)\)")
_ATTRIBUTE_REFERENCE = re.compile(r"\{(litdd|plus|caret|tilde|empty|nbsp|sp|amp|lt|gt|apos)\}")
_ATTRIBUTE_VALUES = {
    "litdd": "--",
    "plus": "+",
    "caret": "^",
    "tilde": "~",
    "empty": "",
    "nbsp": " ",
    "sp": " ",
    "amp": "&",
    "lt": "<",
    "gt": ">",
    "apos": "'",
}
_VERBATIM_STYLES = ("verse", "literal", "listing", "source")


def looks_like_asciidoc(text: str) -> bool:
    """Whether a ``.txt`` file is AsciiDoc: at least two kinds of its markers in the first
    300 lines (an underlined title, ``term::`` entries, block attributes such as ``[verse]``,
    directives, ``linkgit:``, ``----`` listing blocks, attribute entries, tables, ``+``
    continuation lines), or two ``term::`` entries or three continuation lines."""
    lines = text.splitlines()[:300]
    kinds: set[str] = set()
    terms = continuations = 0
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and first + 1 < len(lines):
        title, under = lines[first].strip(), lines[first + 1].strip()
        if _UNDERLINE.match(under) and under[0] in "=-" and abs(len(under) - len(title)) <= 2:
            kinds.add("title")
    for line in lines:
        if _DIRECTIVE.match(line):
            kinds.add("directive")
        elif _TABLE.match(line):
            kinds.add("table")
        elif (
            line.startswith("[[")
            or line.strip() in ("[verse]", "[listing]", "[literal]")
            or line.startswith("[source")
            or line.startswith("[NOTE]")
        ):
            kinds.add("attribute")
        elif re.match(r"^\S.*(?:::|;;)(?:[ \t].*)?$", line):
            kinds.add("term")
            terms += 1
        elif re.match(r"^-{4,}$", line):
            kinds.add("listing")
        elif _ATTRIBUTE_ENTRY.match(line) and not line.startswith("::"):
            kinds.add("entry")
        elif line == "+":
            kinds.add("continuation")
            continuations += 1
        if "linkgit:" in line:
            kinds.add("linkgit")
    return len(kinds) >= 2 or terms >= 2 or continuations >= 3


def render_inline(text: str) -> str:
    """Inline markup of one stretch of text rendered: links by their text, quotes dropped.
    What is inside backticks is code: it loses its backticks and nothing else."""
    parts: list[str] = []
    pos = 0
    text = _QUOTED.sub(r'"\1"', _OLD_QUOTED.sub(r'"\1"', text))
    text = _OLD_SINGLE_QUOTED.sub(r"\1", text)
    for code in _MONOSPACE.finditer(text):
        parts.append(_render_prose(text[pos : code.start()]))
        parts.append(_ATTRIBUTE_REFERENCE.sub(lambda m: _ATTRIBUTE_VALUES[m.group(1)], code[1]))
        pos = code.end()
    parts.append(_render_prose(text[pos:]))
    return "".join(parts)


def _render_prose(text: str) -> str:
    text = _ATTRIBUTE_REFERENCE.sub(lambda m: _ATTRIBUTE_VALUES[m.group(1)], text)
    text = _INDEX_TERMS.sub("", text)
    text = _INDEX_TERM.sub(r"\1", text)
    text = _ANCHOR.sub("", text)
    text = _LINKGIT.sub(r"\1(\2)", text)
    text = _BARE_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _XREF.sub(lambda m: m.group(2) or m.group(1), text)
    text = _EMPHASIS.sub(r"\1", text)
    return _STRONG.sub(r"\1", text)


class _Renderer:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.blocks: list[TextBlock] = []
        self.title = ""
        self.paragraph: list[str] = []
        self.kind = "p"
        """What the open paragraph is: ``p``, ``line`` (a list item) or ``literal``."""
        self.terms: list[str] = []
        """Definition-list terms waiting for their definition."""
        self.style = ""
        """The block style named by the last attribute line (``verse``, ``source``, …)."""
        self.columns = 0
        self.in_definitions = False
        """Inside a definition list, where git's manuals indent whole paragraphs of prose."""

    def emit(self, kind: str, text: str, level: int = 0) -> None:
        if kind != "h" and self.terms and kind in ("p", "line"):
            text = f"{', '.join(self.terms)}: {text}"
            kind = "line"
            self.terms = []
        else:
            self.emit_terms()
        if text.strip():
            self.blocks.append(TextBlock(kind, text, level))

    def emit_terms(self) -> None:
        """Terms with no definition paragraph (one follows as a code block, say) stand alone."""
        if self.terms:
            self.blocks.append(TextBlock("line", ", ".join(self.terms)))
            self.terms = []

    def flush(self) -> None:
        lines, self.paragraph = self.paragraph, []
        kind, self.kind = self.kind, "p"
        style, self.style = self.style, ""
        if not lines:
            return
        prose = self.in_definitions and lines[-1].rstrip().endswith((".", ":", ","))
        if (kind == "literal" and not prose) or style in _VERBATIM_STYLES:
            verbatim = [render_inline(x) if style == "verse" else x for x in lines]
            self.emit("pre", _strip_callouts(verbatim))
            return
        kind = "p" if kind == "literal" else kind
        self.emit(kind, render_inline(" ".join(x.strip() for x in lines)).strip())

    def run(self) -> None:
        index = 0
        lines = self.lines
        while index < len(lines):
            line = lines[index].rstrip()
            index += 1
            if self.paragraph and len(self.paragraph) == 1 and self.kind == "p":
                under = _UNDERLINE.match(line)
                heading = self.paragraph[0].strip()
                if under and abs(len(line) - len(heading)) <= 2 and len(heading) >= 2:
                    self.paragraph = []
                    self.heading(_UNDERLINE_LEVEL[line[0]], heading)
                    continue
            if not line.strip():
                self.flush()
                continue
            if self.kind == "literal" and line[:1] in (" ", "\t"):
                self.paragraph.append(line)
                continue
            if line.startswith("//") and not _DELIMITER.match(line):
                continue
            if _DIRECTIVE.match(line) or line in ("'''", "<<<", "+", "--"):
                self.flush()
                continue
            if _ATTRIBUTE_ENTRY.match(line) and not self.paragraph:
                continue
            if _BLOCK_ATTRIBUTES.match(line):  # names the next block, so it ends this one
                self.flush()
                self.attributes(line)
                continue
            delimiter = _DELIMITER.match(line)
            if delimiter or _TABLE.match(line):
                self.flush()
                index = self.delimited(line, index)
                continue
            one_line = _ONE_LINE_TITLE.match(line)
            if one_line and not self.paragraph:
                self.heading(len(one_line.group(1)), one_line.group(2))
                continue
            if self.start_unit(line):
                continue
            if not self.paragraph and not self.terms and line[:1] in (" ", "\t"):
                self.kind = "literal"
            self.paragraph.append(line)
        self.flush()
        self.emit_terms()

    def start_unit(self, line: str) -> bool:
        """Open a list item, callout item, term or block title at ``line``; False if none."""
        block_title = _BLOCK_TITLE.match(line)
        if block_title and not self.paragraph:
            self.emit("line", render_inline(block_title.group(1)))
            return True
        callout = _CALLOUT_ITEM.match(line)
        item = callout or _LIST_ITEM.match(line)
        if item is not None:
            self.flush()
            self.kind = "line"
            self.paragraph = [item.group(item.lastindex or 1)]
            return True
        term = _TERM.match(line)
        if term is not None and "://" not in term.group(1):
            self.flush()
            self.in_definitions = True
            self.terms.append(render_inline(term.group(1)).strip())
            if term.group(2):
                self.paragraph = [term.group(2)]
            return True
        return False

    def heading(self, level: int, text: str) -> None:
        self.flush()
        text = render_inline(text).strip()
        self.in_definitions = False
        if level == 1 and not self.title:
            self.title = text
        self.emit("h", text, level)

    def attributes(self, line: str) -> None:
        if line.startswith("[[") or line.startswith("[#"):
            return
        name = line[1:-1].split(",")[0].strip().lower()
        self.style = name
        cols = re.search(r'cols="?([^"\]]+)"?', line)
        if cols:
            self.columns = sum(_column_count(spec) for spec in cols.group(1).split(","))

    def delimited(self, opening: str, index: int) -> int:
        """Read the block opened by ``opening``; returns the index after its closing line."""
        closing = opening.rstrip()
        body: list[str] = []
        while index < len(self.lines) and self.lines[index].rstrip() != closing:
            if not _DIRECTIVE.match(self.lines[index]):  # directives apply inside blocks too
                body.append(self.lines[index].rstrip("\r\n"))
            index += 1
        index += 1
        char = closing[0]
        style, self.style = self.style, ""
        columns, self.columns = self.columns, 0
        if _TABLE.match(closing):
            for row in _table_rows(body, columns):
                self.emit("line", row)
        elif char in "-." or style in _VERBATIM_STYLES:
            if any(x.strip() for x in body):
                self.emit("pre", _strip_callouts(body))
        elif char in "=*_":  # example, sidebar and quote blocks hold ordinary content
            inner = _Renderer(body)
            inner.run()
            self.emit_terms()
            self.blocks.extend(inner.blocks)
        return index


def _column_count(spec: str) -> int:
    multiplier = re.match(r"^\s*(\d+)\*", spec)
    return int(multiplier.group(1)) if multiplier else 1


def _table_rows(body: list[str], columns: int) -> list[str]:
    """Rows of a ``|===`` table, cells joined by `` | ``; a row per source line when the column
    count is not given, else cells are grouped by it."""
    cells_by_line = [
        [render_inline(" ".join(c.split())) for c in re.split(r"(?:^|(?<=\s))[^\s|]*\|", x)[1:]]
        for x in body
        if x.strip()
    ]
    if not columns:
        columns = len(cells_by_line[0]) if cells_by_line else 1
    cells = [c for line in cells_by_line for c in line]
    rows = [cells[i : i + columns] for i in range(0, len(cells), max(columns, 1))]
    # an empty cell stays (as an empty place between bars) so later cells keep their columns
    return [" | ".join(_trimmed(row)) for row in rows if any(row)]


def _trimmed(row: list[str]) -> list[str]:
    end = len(row)
    while end and not row[end - 1]:
        end -= 1
    return row[:end]


def _strip_callouts(lines: list[str]) -> str:
    text = "\n".join(_CALLOUT_IN_CODE.sub("", x) for x in lines)
    return text.strip("\n").rstrip()


def extract_asciidoc(text: str, fallback_title: str) -> ExtractedDocument:
    """``text`` (AsciiDoc) rendered to plain text with its section headings."""
    renderer = _Renderer(text.splitlines())
    renderer.run()
    rendered, sections, code = layout_blocks(renderer.blocks)
    full = renderer.title or fallback_title
    title = clean_title(full) or full
    extra = {"full_title": full} if title != full else {}
    return ExtractedDocument(rendered, title, "asciidoc", sections, extra=extra, code=code)
