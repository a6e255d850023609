"""The document inside an HTML page: its main content as headings, paragraphs, list items, table
rows and whole code blocks, without the page around it (menus, sidebars, navigation bars).

The one HTML reader: ingestion and the page-fetch tool both use it. Text layout, which the
chunker and the answer composer rely on: blocks are separated by a blank line; a list item, a
table row (cells joined by `` | ``) and a definition entry (``term: definition``) are each one
line, consecutive ones separated by a single newline; a ``pre`` block is kept verbatim.
"""

from __future__ import annotations

import re
from html import unescape

from kforge.rag.extract.document import (
    ExtractedDocument,
    ExtractionError,
    TextBlock,
    clean_title,
    include_directives_only,
    layout_blocks,
)
from kforge.rag.extract.html_chrome import is_chrome, is_sidebar, opens_section
from kforge.rag.extract.html_prose import prose_blocks, text_pres
from kforge.rag.extract.html_tree import BLOCK_TAGS, Node, TreeBuilder

__all__ = ["extract_html"]

_SPACE = re.compile(r"\s+")
_RUN_OF_SPACES = re.compile(r" {2,}")
_AROUND_BREAK = re.compile(r" *\n *")
_SECTION_NUMBER = re.compile(r"^(?:[0-9]+|[A-Z])(?:\.[0-9]+)*\.?\s+")
_CALLOUT = re.compile(r"^<\d+>$")
_MARKDOWN_HEADING = re.compile(r"(#{2,6}) +([A-Za-z_][^\n]*?)(?: +#+)?")
"""A paragraph that is a Markdown heading a build left unrendered (``<p>## Does Black have an
API?</p>``: Markdown pages built as reStructuredText): the heading it was written as. One
``#`` is left a paragraph: it is as often a root prompt (``# make install``)."""


def _plain(node: Node) -> str:
    """The node's text on one line, page chrome inside it (e.g. a heading's ¶ link) left out."""
    sub = _Renderer()
    sub.line_mode = 1
    sub.render(node)
    sub.flush()
    return " ".join(" ".join(b.text.split()) for b in sub.blocks)


def _find_main(root: Node, generator: str = "") -> Node | None:
    """The page's main content: the first ``main`` or ``role=main`` element, else a Sphinx
    ``div.body`` (Doxygen's ``div.contents``), else the page's only ``article`` (several
    articles are a listing: no main)."""
    if generator.startswith("Doxygen"):
        # Doxygen puts a page's text in div.contents, a class that elsewhere names a table of
        # contents: taken as chrome, every page of a Doxygen manual read as its project name
        contents = _first_div(root, "contents")
        if contents is not None:
            _drop_option_indexes(contents)
            return contents
    found: dict[str, list[Node]] = {"main": [], "body": [], "article": []}
    pending: list[Node | str] = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, str) or (node is not root and is_chrome(node)):
            continue
        if node.tag == "main" or node.attrs.get("role") == "main":
            found["main"].append(node)
        elif node.tag == "div" and "body" in node.attrs.get("class", "").split():
            found["body"].append(node)
        elif node.tag == "article":
            found["article"].append(node)
        pending.extend(reversed(node.children))
    if found["main"]:
        return found["main"][0]
    if found["body"]:
        return found["body"][0]
    return found["article"][0] if len(found["article"]) == 1 else None


def _drop_option_indexes(node: Node) -> None:
    """Remove Doxygen's multi-column indexes (``ul.multicol``: every option or command of the
    page, each a link to where the page describes it): a list of names that says nothing."""
    kept: list[Node | str] = []
    for child in node.children:
        if isinstance(child, str):
            kept.append(child)
        elif child.tag == "ul" and "multicol" in child.attrs.get("class", "").split():
            continue
        else:
            _drop_option_indexes(child)
            kept.append(child)
    node.children[:] = kept


def _first_div(root: Node, css_class: str) -> Node | None:
    pending: list[Node | str] = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, str):
            continue
        if node.tag == "div" and css_class in node.attrs.get("class", "").split():
            return node
        pending.extend(reversed(node.children))
    return None


class _Renderer:
    def __init__(self) -> None:
        self.blocks: list[TextBlock] = []
        self.inline: list[str] = []
        self.line_mode = 0
        """Above 0 inside a list item or table cell: paragraphs there are lines."""
        self.keywords: set[int] = set()
        """Where in ``blocks`` keyword headers stand (see ``keyword``)."""
        self.prose: set[int] = set()
        """The ``<pre>`` nodes that hold the page's text, not code (see ``html_prose``)."""

    def flush(self) -> None:
        text = _AROUND_BREAK.sub("\n", _RUN_OF_SPACES.sub(" ", "".join(self.inline))).strip()
        self.inline = []
        if not text:
            return
        heading = None if self.line_mode else _MARKDOWN_HEADING.fullmatch(text)
        if heading is not None:
            self.blocks.append(TextBlock("h", heading.group(2), len(heading.group(1))))
        else:
            self.blocks.append(TextBlock("line" if self.line_mode else "p", text))

    def render(self, node: Node) -> None:
        beside: list[Node] = []
        said = False
        for child in node.children:
            if isinstance(child, str):
                self.inline.append(_SPACE.sub(" ", child))
                said = said or bool(child.strip())
            elif is_chrome(child):
                continue
            elif is_sidebar(child):
                # set beside the text, it is read after it (before a subsection that follows
                # the text), so the passage the text makes is not split
                beside.append(child)
            else:
                if beside and said and opens_section(child):
                    self._render_beside(beside)
                self.element(child)
                said = True
        self._render_beside(beside)

    def _render_beside(self, nodes: list[Node]) -> None:
        for sidebar in nodes:
            self.element(sidebar)
        nodes.clear()

    def element(self, node: Node) -> None:
        tag = node.tag
        if tag == "br":
            self.inline.append("\n")
        elif tag == "pre" and id(node) in self.prose:
            self.flush()
            self.blocks.extend(prose_blocks(_raw(node)))
        elif tag == "pre":
            self.flush()
            node = self._caption_of(node)
            lines = [line.rstrip() for line in _unescaped_colours(_raw(node)).split("\n")]
            text = "\n".join(lines).strip("\n")
            if text.strip() and not include_directives_only(text):
                self.blocks.append(TextBlock("pre", text))
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.flush()
            text = _plain(node)
            if text:
                self.blocks.append(TextBlock("h", text, int(tag[1])))
        elif tag == "div" and "keyword" in node.attrs.get("class", "").split():
            self.keyword(node)
        elif tag in ("ul", "ol", "menu"):
            self.flush()
            self.line_mode += 1
            self.render(node)
            self.flush()
            self.line_mode -= 1
        elif tag == "li":
            self.flush()
            self.render(node)
            self.flush()
        elif tag == "dl":
            self.flush()
            self.definitions(node)
        elif tag == "table":
            self.flush()
            self.table(node)
        elif tag in BLOCK_TAGS:
            if self.line_mode and tag == "p":
                self.inline.append(" ")
                self.render(node)
                return
            self.flush()
            self.render(node)
            self.flush()
        else:
            self.render(node)

    def _caption_of(self, pre: Node) -> Node:
        """A ``<pre>`` that opens with a paragraph or division of prose before its code
        (HAProxy's manual: "Redirect all HTTP traffic to HTTPS ...", then the rule) gives
        that prose as a paragraph; what remains is the code."""
        at = 0
        while at < len(pre.children):
            child = pre.children[at]
            if isinstance(child, str):
                if child.strip():
                    break
            elif child.tag in ("div", "p") and not _descendants(child, "code"):
                caption = _plain(child)
                if caption:
                    self.blocks.append(TextBlock("p", caption))
            else:
                break
            at += 1
        if at == 0:
            return pre
        return Node(pre.tag, pre.attrs, pre.children[at:])

    def keyword(self, node: Node) -> None:
        """A keyword's header (``<div class="keyword">``, HAProxy's manual: "inter <delay>")
        heads the text after it, a level below the heading it is under; keywords heading one
        text together ("inter", "fastinter", "downinter") are one heading."""
        self.flush()
        text = _plain(node)
        if not text:
            return
        last = len(self.blocks) - 1
        if last in self.keywords:
            merged = f"{self.blocks[last].text}, {text}"
            self.blocks[last] = TextBlock("h", merged, self.blocks[last].level)
            return
        above = next(
            (
                b.level
                for at, b in reversed(list(enumerate(self.blocks)))
                if b.kind == "h" and at not in self.keywords
            ),
            0,
        )
        self.keywords.add(len(self.blocks))
        self.blocks.append(TextBlock("h", text, min(above + 1, 6)))

    def definitions(self, node: Node) -> None:
        terms: list[str] = []
        for child in node.children:
            if isinstance(child, str) or is_chrome(child):
                continue
            if child.tag == "dt":
                term = _plain(child)
                if term:
                    terms.append(term)
            elif child.tag == "dd":
                sub = _Renderer()
                sub.render(child)
                sub.flush()
                label = ", ".join(terms)
                terms = []
                if label and sub.blocks and sub.blocks[0].kind in ("p", "line"):
                    first = sub.blocks[0]
                    sub.blocks[0] = TextBlock("line", f"{label}: {first.text}")
                elif label:
                    self.blocks.append(TextBlock("line", label))
                self.blocks.extend(sub.blocks)
            else:
                self.element(child)
        if terms:
            self.blocks.append(TextBlock("line", ", ".join(terms)))

    def table(self, node: Node) -> None:
        rows = [r for r in _descendants(node, "tr") if _is_own_row(r, node)]
        layout = any(_descendants(cell, "pre") or _descendants(cell, "table") for cell in rows)
        if layout or not rows:  # a table used to lay out a code example or a page
            self.render(node)
            self.flush()
            return
        caption = next((c for c in _descendants(node, "caption")), None)
        if caption is not None and _plain(caption):
            self.blocks.append(TextBlock("p", _plain(caption)))
        for row in rows:
            cells = [c for c in row.children if not isinstance(c, str) and c.tag in ("td", "th")]
            texts = [t for t in (_plain(c) for c in cells) if t]
            if texts:
                self.blocks.append(TextBlock("line", " | ".join(texts)))


def _descendants(node: Node, tag: str) -> list[Node]:
    found: list[Node] = []
    for child in node.children:
        if isinstance(child, str):
            continue
        if child.tag == tag:
            found.append(child)
        found.extend(_descendants(child, tag))
    return found


def _is_own_row(row: Node, table: Node) -> bool:
    parent = row.parent
    while parent is not None and parent is not table:
        if parent.tag == "table":
            return False
        parent = parent.parent
    return True


_COLOURED = re.compile(r"<font color=[\"']#[0-9A-Fa-f]{3,6}[\"']>")
_STYLE_TAG = re.compile(r"</?(?:font|b|i|u|span)(?:\s[^<>\n]*)?>")


def _unescaped_colours(text: str) -> str:
    """A terminal's coloured output a page escaped into its code block (``<font
    color="#F4BF75">Usage: </font>``), which a script on the page renders as colours, read as
    the reader sees it: the tags left out, the entities inside them decoded."""
    if not _COLOURED.search(text):
        return text
    return unescape(_STYLE_TAG.sub("", text))


def _raw(node: Node) -> str:
    parts: list[str] = []
    for child in node.children:
        if isinstance(child, str):
            parts.append(child)
        elif child.tag == "br":
            parts.append("\n")
        elif child.tag == "b" and _CALLOUT.match(_raw(child)):
            continue  # AsciiDoc's callout numbers point into the prose, not part of the code
        elif not is_chrome(child):
            parts.append(_raw(child))
    return "".join(parts)


def extract_html(html: str, fallback_title: str) -> ExtractedDocument:
    """The main content of ``html`` as text with its headings; page chrome is left out."""
    builder = TreeBuilder()
    try:
        builder.feed(html)
        builder.close()
    except Exception as exc:  # html.parser is lenient; anything it still rejects is a broken file
        raise ExtractionError(f"unreadable HTML ({type(exc).__name__}: {exc})") from None
    if builder.generator.startswith("texi2html") and 'name="SEC_About"' in html:
        raise ExtractionError(
            "the navigation help page of a generated manual (no document text); nothing to index"
        )
    main = _find_main(builder.root, builder.generator) or builder.root
    renderer = _Renderer()
    pres = [(pre, _raw(pre)) for pre in _descendants(main, "pre")]
    if pres:
        renderer.prose = text_pres(pres, len(_raw(main)))
    renderer.render(main)
    renderer.flush()
    text, sections, code = layout_blocks(renderer.blocks)
    first_h1 = next((s.heading for s in sections if s.level == 1), "")
    full = builder.title or first_h1 or fallback_title
    title = clean_title(full) or full
    if builder.generator.startswith("texi2html"):  # titled "Manual: N. Section" or "Manual"
        _, colon, section = full.partition(": ")
        if colon:
            title = _SECTION_NUMBER.sub("", section) or title
        elif sections and sections[0].heading != full:
            title, full = sections[0].heading, f"{full}: {sections[0].heading}"
    if builder.generator.startswith("Doxygen"):  # titled "Project: Page", the page in its header
        header = _first_div(builder.root, "headertitle")
        title = (_plain(header) if header is not None else "") or title
    extra = {"full_title": full} if title != full else {}
    return ExtractedDocument(text, title, "html", sections, extra=extra, code=code)
