"""The document inside an HTML page: its main content as headings, paragraphs, list items, table
rows and whole code blocks, without the page around it (menus, sidebars, navigation bars).

The one HTML reader: ingestion and the page-fetch tool both use it. Text layout, which the
chunker and the answer composer rely on: blocks are separated by a blank line; a list item, a
table row (cells joined by `` | ``) and a definition entry (``term: definition``) are each one
line, consecutive ones separated by a single newline; a ``pre`` block is kept verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from kforge.rag.extract.document import (
    ExtractedDocument,
    ExtractionError,
    TextBlock,
    clean_title,
    layout_blocks,
)

__all__ = ["extract_html"]

# What a browser does not show, and page chrome by element name.
_DROPPED_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "iframe",
        "object",
        "nav",
        "footer",
        "header",
        "aside",
        "form",
        "button",
        "select",
        "textarea",
        "head",
        "title",
    }
)
_DROPPED_ROLES = frozenset({"navigation", "search", "banner", "contentinfo", "complementary"})
_DOCUTILS_BOXES = {"topic": "topic-title", "sidebar": "sidebar-title"}
"""Docutils' topic and sidebar directives, by class and the class of their title paragraph."""
_FOOTNOTES = frozenset({"footnote", "footnote-list"})
# Class and id words of page chrome in Sphinx, MkDocs, Texinfo (makeinfo, texi2html) and
# common site themes; matched against whole class tokens and ids.
_CHROME_WORDS = frozenset(
    {
        "sphinxsidebar",
        "sphinxsidebarwrapper",
        "related",
        "footer",
        "header",
        "headerlink",
        "navbar",
        "nav-panel",
        "navigation",
        "mini-toc",
        "menu",
        "contents",
        "shortcontents",
        "toc",
        "fancy_toc",
        "tagline",
        "toctree-wrapper",
        "bs-sidebar",
        "sidebar",
        "modal",
        "searchbox",
        "inline-search",
        "mobile-nav",
        "menu-wrapper",
        "version_switcher_placeholder",
        "language_switcher_placeholder",
        "sourcelink",
        "this-page-menu",
        "skip-link",
        "skiplink",
        "breadcrumbs",
        "rst-footer-buttons",
        "prev-next",
        "footnote-reference",  # a footnote's number in the text ("queue.1"): the note is kept
    }
)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source"}
    | {"track", "wbr"}
)
# An open element of one of these kinds is closed by a new one of the same group (HTML's
# optional end tags), but not across the container named with it.
_IMPLIED_END = {
    "p": ({"p"}, set()),
    "li": ({"li"}, {"ul", "ol"}),
    "dt": ({"dt", "dd"}, {"dl"}),
    "dd": ({"dt", "dd"}, {"dl"}),
    "tr": ({"tr", "td", "th"}, {"table", "thead", "tbody", "tfoot"}),
    "td": ({"td", "th"}, {"tr", "table"}),
    "th": ({"td", "th"}, {"tr", "table"}),
    "option": ({"option"}, {"select"}),
}
_BLOCK_TAGS = frozenset(
    {"address", "article", "blockquote", "center", "details", "div", "dl", "fieldset", "figure"}
    | {"figcaption", "hr", "main", "ol", "p", "pre", "section", "summary", "table", "ul", "aside"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "caption", "body", "html", "dd", "dt", "li", "tr"}
)
_SPACE = re.compile(r"\s+")
_RUN_OF_SPACES = re.compile(r" {2,}")
_AROUND_BREAK = re.compile(r" *\n *")
# Texinfo navigation: texi2html's "[ << ] [ >> ] [Top] [Contents]" bars and makeinfo's
# "Next: …, Previous: …, Up: …" lines; generators' "This document was generated …" notes.
_BRACKET_BAR = re.compile(r"^(?:\s*\[[^\]]{0,40}\])+\s*$")
_NEXT_PREV_UP = re.compile(r"^\s*(?:Next|Previous|Prev|Up):\s.*\b(?:Previous|Prev|Up|Next):")
_SECTION_NUMBER = re.compile(r"^(?:[0-9]+|[A-Z])(?:\.[0-9]+)*\.?\s+")
_CALLOUT = re.compile(r"^<\d+>$")
_SKIP_LINK = re.compile(r"^\s*(?:skip to (?:main )?content|jump to navigation|jump to:)", re.I)
_GENERATED_BY = re.compile(r"^\s*This document was generated (?:by|on|using)\b.*\busing\b", re.S)


@dataclass(slots=True)
class _Node:
    tag: str
    attrs: dict[str, str]
    children: list[_Node | str] = field(default_factory=list)
    parent: _Node | None = None


class _TreeBuilder(HTMLParser):
    """A forgiving element tree: optional end tags implied, stray end tags ignored."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#root", {})
        self.stack: list[_Node] = [self.root]
        self.title: str | None = None
        self._title_parts: list[str] | None = None
        self.generator = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if self._title_parts is not None:
            self._end_title()  # an unclosed <title> ends where the next element starts
        if tag == "title" and self.title is None:
            self._title_parts = []
            return
        if tag == "meta" and values.get("name", "").lower() == "generator":
            self.generator = values.get("content", "")
        if tag in ("body", "html", "head"):
            if tag == "body":  # </head> may be omitted: <body> ends the head too
                while len(self.stack) > 1:
                    self.stack.pop()
            node = _Node(tag, values, parent=self.root)
            self.root.children.append(node)
            self.stack = [self.root, node]
            return
        implied = _IMPLIED_END.get(tag)
        if implied is not None or tag in _BLOCK_TAGS:
            closes, scope = implied or ({"p"}, set())
            for index in range(len(self.stack) - 1, 0, -1):
                open_tag = self.stack[index].tag
                if open_tag in scope or (implied is None and open_tag != "p"):
                    break
                if open_tag in closes:
                    del self.stack[index:]
                    break
        node = _Node(tag, values, parent=self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID and self.stack[-1].tag == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._title_parts is not None:
            self._end_title()
            return
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag == tag:
                del self.stack[index:]
                return

    def handle_data(self, data: str) -> None:
        if self._title_parts is not None:
            self._title_parts.append(data)
        else:
            self.stack[-1].children.append(data)

    def _end_title(self) -> None:
        self.title = " ".join("".join(self._title_parts or ()).split())
        self._title_parts = None


def _is_chrome(node: _Node) -> bool:
    if node.tag in ("aside", "div") and _docutils_box(node):
        return False
    if node.tag == "span" and _footnote_furniture(node):
        return True
    if node.tag in _DROPPED_TAGS:
        return True
    attrs = node.attrs
    if attrs.get("role", "") in _DROPPED_ROLES or "hidden" in attrs:
        return True
    words = set(attrs.get("class", "").split())
    if attrs.get("id") and attrs["id"] != "header":  # AsciiDoc's id=header holds NAME
        words.add(attrs["id"])
    if words & _CHROME_WORDS:
        return True
    if node.tag in ("ul", "ol") and _anchor_list(node):
        return True
    if node.tag in ("table", "p", "div", "a"):
        text = _short_text(node)
        if text is not None and (
            _BRACKET_BAR.match(text)
            or _NEXT_PREV_UP.match(text)
            or _SKIP_LINK.match(text)
            or _GENERATED_BY.match(text)
        ):
            return True
    return False


def _docutils_box(node: _Node) -> bool:
    """True for the text a reStructuredText document sets beside its own: a topic, a sidebar,
    its footnotes (``aside`` since docutils 0.18, ``div`` before); a theme's sidebar has
    another class or no docutils title."""
    classes = set(node.attrs.get("class", "").split())
    if node.tag == "aside" and classes & _FOOTNOTES:
        return True
    if (classes & _CHROME_WORDS) - {"sidebar"}:  # "contents topic": a local table of contents
        return False
    return any(
        cls in classes
        and any(
            not isinstance(child, str)
            and child.tag == "p"
            and title in child.attrs.get("class", "").split()
            for child in node.children
        )
        for cls, title in _DOCUTILS_BOXES.items()
    )


def _is_sidebar(node: _Node) -> bool:
    return "sidebar" in node.attrs.get("class", "").split() and _docutils_box(node)


def _opens_section(node: _Node) -> bool:
    tag = node.tag
    return (
        tag == "section"
        or (len(tag) == 2 and tag[0] == "h" and tag[1] in "123456")
        or (tag == "div" and "section" in node.attrs.get("class", "").split())
    )


def _footnote_furniture(node: _Node) -> bool:
    """A footnote's label ("[1]": quoted, it would read as a citation marker) and back-links."""
    parent = node.parent
    return (
        bool({"label", "backrefs"} & set(node.attrs.get("class", "").split()))
        and parent is not None
        and parent.tag == "aside"
        and "footnote" in parent.attrs.get("class", "").split()
    )


def _anchor_list(node: _Node) -> bool:
    """True for a list of three or more items that each only link to a place on the same
    page (a page's own table of contents, such as an FAQ's list of its questions): the
    text is said again where the links point."""
    items = [c for c in node.children if not isinstance(c, str)]
    if len(items) < 3 or any(c.tag != "li" for c in items):
        return False
    for item in items:
        parts = [c for c in item.children if not (isinstance(c, str) and not c.strip())]
        if not parts or isinstance(parts[0], str) or parts[0].tag != "a":
            return False
        if not parts[0].attrs.get("href", "").startswith("#"):
            return False
        if any(isinstance(p, str) or p.tag not in ("ul", "ol") for p in parts[1:]):
            return False  # text beside the link, or more than a nested list of links
    return True


def _short_text(node: _Node, limit: int = 600) -> str | None:
    """The node's text when it is at most ``limit`` characters (navigation is short), else None;
    the walk stops early, so testing every element of a large page stays linear."""
    parts: list[str] = []
    size = 0
    pending: list[_Node | str] = list(reversed(node.children))
    while pending:
        child = pending.pop()
        if isinstance(child, str):
            parts.append(child)
            size += len(child)
            if size > limit * 4:
                return None
        elif child.tag not in ("script", "style"):
            pending.extend(reversed(child.children))
    text = " ".join("".join(parts).split())
    return text if len(text) <= limit else None


def _plain(node: _Node) -> str:
    """The node's text on one line, page chrome inside it (e.g. a heading's ¶ link) left out."""
    sub = _Renderer()
    sub.line_mode = 1
    sub.render(node)
    sub.flush()
    return " ".join(" ".join(b.text.split()) for b in sub.blocks)


def _find_main(root: _Node, generator: str = "") -> _Node | None:
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
    found: dict[str, list[_Node]] = {"main": [], "body": [], "article": []}
    pending: list[_Node | str] = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, str) or (node is not root and _is_chrome(node)):
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


def _drop_option_indexes(node: _Node) -> None:
    """Remove Doxygen's multi-column indexes (``ul.multicol``: every option or command of the
    page, each a link to where the page describes it): a list of names that says nothing."""
    kept: list[_Node | str] = []
    for child in node.children:
        if isinstance(child, str):
            kept.append(child)
        elif child.tag == "ul" and "multicol" in child.attrs.get("class", "").split():
            continue
        else:
            _drop_option_indexes(child)
            kept.append(child)
    node.children[:] = kept


def _first_div(root: _Node, css_class: str) -> _Node | None:
    pending: list[_Node | str] = [root]
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

    def flush(self) -> None:
        text = _AROUND_BREAK.sub("\n", _RUN_OF_SPACES.sub(" ", "".join(self.inline))).strip()
        self.inline = []
        if text:
            self.blocks.append(TextBlock("line" if self.line_mode else "p", text))

    def render(self, node: _Node) -> None:
        beside: list[_Node] = []
        said = False
        for child in node.children:
            if isinstance(child, str):
                self.inline.append(_SPACE.sub(" ", child))
                said = said or bool(child.strip())
            elif _is_chrome(child):
                continue
            elif _is_sidebar(child):
                # set beside the text, it is read after it (before a subsection that follows
                # the text), so the passage the text makes is not split
                beside.append(child)
            else:
                if beside and said and _opens_section(child):
                    self._render_beside(beside)
                self.element(child)
                said = True
        self._render_beside(beside)

    def _render_beside(self, nodes: list[_Node]) -> None:
        for sidebar in nodes:
            self.element(sidebar)
        nodes.clear()

    def element(self, node: _Node) -> None:
        tag = node.tag
        if tag == "br":
            self.inline.append("\n")
        elif tag == "pre":
            self.flush()
            lines = [line.rstrip() for line in _raw(node).split("\n")]
            text = "\n".join(lines).strip("\n")
            if text.strip():
                self.blocks.append(TextBlock("pre", text))
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.flush()
            text = _plain(node)
            if text:
                self.blocks.append(TextBlock("h", text, int(tag[1])))
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
        elif tag in _BLOCK_TAGS:
            if self.line_mode and tag == "p":
                self.inline.append(" ")
                self.render(node)
                return
            self.flush()
            self.render(node)
            self.flush()
        else:
            self.render(node)

    def definitions(self, node: _Node) -> None:
        terms: list[str] = []
        for child in node.children:
            if isinstance(child, str) or _is_chrome(child):
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

    def table(self, node: _Node) -> None:
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


def _descendants(node: _Node, tag: str) -> list[_Node]:
    found: list[_Node] = []
    for child in node.children:
        if isinstance(child, str):
            continue
        if child.tag == tag:
            found.append(child)
        found.extend(_descendants(child, tag))
    return found


def _is_own_row(row: _Node, table: _Node) -> bool:
    parent = row.parent
    while parent is not None and parent is not table:
        if parent.tag == "table":
            return False
        parent = parent.parent
    return True


def _raw(node: _Node) -> str:
    parts: list[str] = []
    for child in node.children:
        if isinstance(child, str):
            parts.append(child)
        elif child.tag == "br":
            parts.append("\n")
        elif child.tag == "b" and _CALLOUT.match(_raw(child)):
            continue  # AsciiDoc's callout numbers point into the prose, not part of the code
        elif not _is_chrome(child):
            parts.append(_raw(child))
    return "".join(parts)


def extract_html(html: str, fallback_title: str) -> ExtractedDocument:
    """The main content of ``html`` as text with its headings; page chrome is left out."""
    builder = _TreeBuilder()
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
