"""A GNU Info file (what ``makeinfo`` writes from a Texinfo manual) read as ``info`` shows it.

An Info file is a series of nodes, each after a ``\\x1f`` line and a ``File: ..., Node: ...``
line, each opening with a heading underlined by ``*``, ``=``, ``-`` or ``.`` (chapter to
subsubsection). Its text is laid out by indentation alone, and read so: a paragraph (its first
line indented 0 or 3 columns), a table entry (one or more term lines, ``-i`` / ``--ignore-case``
in curly quotes, with its text indented 5 columns more) as one ``-i, --ignore-case: text`` line, a
definition (`` -- Function: ffi_call (...)``) the same way, a bullet or numbered item as a line
(its own paragraphs after it), a heading inside a node as a section under the node's, and an
example (indented 5 columns past the text around it) as code, unless it reads as filled prose
(a quotation). Cross references read as a printed manual writes them ("*note
Block size::" is "see Block size"). What only navigates is left out: menus (an index is one),
the file's header, its tag table, and a copyright notice with its permission paragraph. A
manual split into parts (``find.info`` naming ``find.info-1``, ``find.info-2``) is read from
its parts; the file that only lists them is reported as holding no text.
"""

from __future__ import annotations

import re

from kforge.rag.extract.document import (
    ExtractedDocument,
    ExtractionError,
    TextBlock,
    layout_blocks,
)

__all__ = ["extract_info", "without_marks"]

_SEPARATOR = "\x1f"
_NODE_LINE = re.compile(r"^File:\s*([^,]*),\s*Node:\s*([^,\t]*)")
_UNDERLINE = {"*": 2, "=": 3, "-": 4, ".": 5}
"""Heading level by the character underlining it (the Top node's heading is level 1)."""
_BODY_STEP = 4
"""A line indented at least this much more than the one before it starts a term's text or an
example (makeinfo indents both by 5)."""
_TERM_LENGTH = 72
_TERM_WORDS = 8
_BULLET = re.compile(r"^(?:[\u2022*\u2013-]|\d{1,3}\.|[a-zA-Z]\.)[ \t]+(?=\S)")
_DEFINITION = re.compile(r"^-- ([A-Z][\w ]*:.*)$")
_XREF = re.compile(
    r"\*([Nn])ote[ \n]+(?:\([^)]*\))?([^:*]+?)::"
    r"|\*([Nn])ote[ \n]+([^:*]+?):[ \n]+(?:\([^)]*\))?[^.,:*]*?([.,])"
)
_SEE_SEE = re.compile(r"\b([Ss]ee) see ")
_NOTICE = re.compile(r"^(?:Copyright\s+(?:©|\(C\))|Permission is granted to copy)")
_FOOTNOTES = re.compile(r"^-{5,} Footnotes -{5,}$")
_PROSE_WIDTH = 60
"""A line of a filled paragraph this wide (with its indentation) or wider."""


_MARK = re.compile(rb"\x00\x08\[[^\x00]{0,200}\x00\x08\]")


def without_marks(data: bytes) -> bytes:
    """An Info file's bytes without the marks ``info`` reads and never shows (an index node's
    ``\\0\\b[index\\0\\b]``), whose NUL bytes would make the file look binary."""
    return _MARK.sub(b"", data)


def _xref(match: re.Match[str]) -> str:
    if match.group(1):
        return ("See " if match.group(1) == "N" else "see ") + " ".join(match.group(2).split())
    see = "See " if match.group(3) == "N" else "see "
    return see + " ".join(match.group(4).split()) + match.group(5)


def _joined(lines: list[str]) -> str:
    text = _XREF.sub(_xref, " ".join(" ".join(line.split()) for line in lines))
    return _SEE_SEE.sub(r"\1 ", text)  # "Also see *note Common options::"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _reads_as_prose(lines: list[str]) -> bool:
    """An indented block that is filled text (a quotation), not an example kept line by line."""
    if len(lines) < 2 or any(len(line) < _PROSE_WIDTH for line in lines[:-1]):
        return False
    text = " ".join(line.strip() for line in lines)
    return text.endswith((".", ":", "!", "?", ".)", ".\u201d")) and ". " in text + " "


def _paragraphs(lines: list[str]) -> list[list[str]]:
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.rstrip())
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return paragraphs


def _without_menus(paragraphs: list[list[str]]) -> list[list[str]]:
    """The node's paragraphs without its menu (``* Menu:`` and its ``* Node::`` entries, the
    titles grouping them and an index's ``* term: Node. (line 12)`` lines)."""
    kept: list[list[str]] = []
    in_menu = False
    for at, paragraph in enumerate(paragraphs):
        first = paragraph[0].strip()
        if first == "* Menu:":
            in_menu = True
            rest = paragraph[1:]
            if rest and not rest[0].lstrip().startswith("* "):
                in_menu = False
            continue
        if in_menu:
            following = paragraphs[at + 1][0].lstrip() if at + 1 < len(paragraphs) else ""
            entry = first.startswith("* ")
            group_title = len(paragraph) == 1 and len(first) <= 60 and following.startswith("* ")
            if entry or group_title or "Detailed Node Listing" in first:
                continue
            in_menu = False
        kept.append(paragraph)
    return kept


class _Node:
    """The blocks of one node's text, by indentation (see the module's description)."""

    def __init__(self, blocks: list[TextBlock], level: int) -> None:
        self.blocks = blocks
        self.level = level
        """The node's heading level: a heading inside the node is below it."""
        self.bodies: list[int] = []
        """Indentation of the text of each table entry or definition the text is inside."""
        self.example = False
        """Whether the paragraph before was an example's (so the next one continues it)."""

    def paragraph(self, paragraph: list[str]) -> None:
        example, self.example = self.example, False
        indent = _indent(paragraph[0])
        while self.bodies and indent < self.bodies[-1]:
            self.bodies.pop()
        base = self.bodies[-1] if self.bodies else 0
        first = paragraph[0].strip()
        if _FOOTNOTES.match(first):
            return
        if _NOTICE.match(first):
            return
        heading = _node_heading(paragraph) if len(paragraph) == 2 and not indent else None
        if heading:  # a heading inside the node (a function's name in an API manual)
            level = max(heading[0], self.level + 1)
            self.blocks.append(TextBlock("h", heading[1], level))
            return
        if self._entry(paragraph, indent):
            return
        if _BULLET.match(first):
            items: list[list[str]] = []
            for line in paragraph:  # items one after another, no blank line between
                bullet = _BULLET.match(line.strip())
                if bullet and _indent(line) == indent:
                    items.append([line.strip()[bullet.end() :]])
                else:
                    items[-1].append(line)
            self.blocks.extend(TextBlock("line", _joined(item)) for item in items)
            self.bodies.append(indent + 2)  # the item's own paragraphs and examples follow
            return
        self._runs(paragraph, base, example)

    def _runs(self, lines: list[str], base: int, example: bool) -> None:
        """Text and the examples in it (an example may follow the sentence leading to it with
        no blank line between)."""
        runs: list[list[str]] = []
        for line in lines:
            indented = _indent(line) >= base + _BODY_STEP
            if runs and indented == (_indent(runs[-1][0]) >= base + _BODY_STEP):
                runs[-1].append(line)
            else:
                runs.append([line])
        for run in runs:
            if _indent(run[0]) >= base + _BODY_STEP and not _reads_as_prose(run):
                self._example(run, example)
            else:
                self.blocks.append(TextBlock("p", _joined(run)))
            example = False

    def _example(self, lines: list[str], continued: bool) -> None:
        width = min(_indent(line) for line in lines)
        code = "\n".join(line[width:] for line in lines)
        if continued and self.blocks[-1].kind == "pre":  # an example's blank line
            self.blocks[-1].text += "\n\n" + code
        else:
            self.blocks.append(TextBlock("pre", code))
        self.example = True

    def _entry(self, paragraph: list[str], indent: int) -> bool:
        """A table entry's or a definition's term lines and its text's first paragraph as one
        ``term, term: text`` line; the paragraphs indented as its text follow it."""
        definition = _DEFINITION.match(paragraph[0].strip())
        terms: list[str] = []
        at = 0
        while at < len(paragraph) and _indent(paragraph[at]) <= indent + 1:
            line = paragraph[at].strip()
            match = _DEFINITION.match(line)
            if definition is None and (
                len(line.split()) > _TERM_WORDS or _indent(paragraph[at]) != indent
            ):
                return False  # a sentence, not a term
            if len(line) > _TERM_LENGTH or (definition is not None and match is None):
                return False
            terms.append(match.group(1) if match else line)
            at += 1
            while definition and at < len(paragraph) and _indent(paragraph[at]) > indent + 5:
                terms[-1] += " " + paragraph[at].strip()  # a long signature's next line
                at += 1
        if definition is None and (len(terms) > 4 or (indent > 3 and not self.bodies)):
            return False
        if at == len(paragraph):
            return False
        body = _indent(paragraph[at])
        if body < indent + _BODY_STEP or terms[-1].endswith((".", ",", ";")):
            return False
        text_lines = paragraph[at:]
        if any(_indent(line) < body for line in text_lines):
            return False
        self.bodies.append(body)
        tag = ", ".join(_joined([term]) for term in terms)
        lead = next(
            (n for n, line in enumerate(text_lines) if _indent(line) >= body + _BODY_STEP),
            len(text_lines),
        )
        self.blocks.append(TextBlock("line", f"{tag}: {_joined(text_lines[:lead])}"))
        if lead < len(text_lines):
            self._runs(text_lines[lead:], body, False)
        return True


def _node_heading(lines: list[str]) -> tuple[int, str, int] | None:
    """The heading ``lines`` open with (level, text, index of the line after its underline),
    if any: a node's, or one inside a node."""
    for at, line in enumerate(lines[:-1]):
        if not line.strip():
            continue
        under = lines[at + 1].strip()
        underlined = under and under[0] in _UNDERLINE and set(under) == {under[0]}
        if underlined and abs(len(under) - len(line.strip())) <= 2:
            return _UNDERLINE[under[0]], " ".join(line.split()), at + 2
        return None
    return None


def extract_info(text: str, fallback_title: str) -> ExtractedDocument:
    """``text`` (an Info file or one part of a split one) rendered to plain text, each node's
    heading a section."""
    parts = text.split(_SEPARATOR)
    blocks: list[TextBlock] = []
    title = ""
    last_level = 2
    nodes = 0
    for part in parts[1:]:
        lines = part.lstrip("\n").splitlines()
        header = _NODE_LINE.match(lines[0]) if lines else None
        if header is None:
            continue
        nodes += 1
        node = header.group(2).strip()
        body = lines[1:]
        heading = _node_heading(body)
        level, name, start = heading or (last_level, node, 0)
        if node == "Top":
            name = name if heading else fallback_title
            level, title = 1, title or name
        last_level = level
        blocks.append(TextBlock("h", name, level))
        reader = _Node(blocks, level)
        for paragraph in _without_menus(_paragraphs(body[start:])):
            reader.paragraph(paragraph)
    if nodes == 0:
        listed = re.findall(r"^([^\s:]+): \d+$", text, flags=re.MULTILINE)
        if listed:
            raise ExtractionError(
                f"an Info file that only lists its parts ({', '.join(listed)}): they hold its text"
            )
        raise ExtractionError("not an Info file: no node (a '\\x1f' line, then 'File: ..., Node:')")
    rendered, sections, code = layout_blocks(blocks)
    return ExtractedDocument(rendered, title or fallback_title, "info", sections, code=code)
