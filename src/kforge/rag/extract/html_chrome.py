"""What of an HTML page is page chrome (menus, sidebars, navigation bars, a footnote's number)
rather than the document, and the document's own asides that look like chrome."""

from __future__ import annotations

import re

from kforge.rag.extract.html_tree import Node

__all__ = ["is_chrome", "is_sidebar", "opens_section"]

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
        "dropdown-menu",  # Bootstrap's menus, shown on a click ("This keyword is available in
        # sections : ..." after every keyword of HAProxy's manual)
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
        "global-nav",
        "hd",  # YUI grids' page header and footer (Django's manual: its name and links)
        "ft",
        "navheader",  # DocBook XSL's "Prev | Up | Next" tables (PostgreSQL's manual)
        "navfooter",
        "page-header",  # the Apache HTTP Server manual: its header, menu and breadcrumbs,
        "toplang",  # its "Available Languages: de | en | ..." bars, and the page's own table
        "bottomlang",  # of contents and see-also box
        "quickview",
    }
)
# Texinfo navigation: texi2html's "[ << ] [ >> ] [Top] [Contents]" bars and makeinfo's
# "Next: …, Previous: …, Up: …" lines; generators' "This document was generated …" notes.
_BRACKET_BAR = re.compile(r"^(?:\s*\[[^\]]{0,40}\])+\s*$")
_NEXT_PREV_UP = re.compile(r"^\s*(?:Next|Previous|Prev|Up):\s.*\b(?:Previous|Prev|Up|Next):")
_SKIP_LINK = re.compile(r"^\s*(?:skip to (?:main )?content|jump to navigation|jump to:)", re.I)
_VERSION_BANNER = re.compile(
    r"^This (?:document|documentation|page) (?:describes|is for|covers) (?:the )?(?:current|"
    r"latest|stable|development|an? (?:old|older|unreleased))\b[^.]*\bversion\b",
    re.I,
)
"""A theme's note of which release the page documents, the same on every page (two short
sentences at most: an element that begins with it and goes on is the page)."""
_BANNER_LENGTH = 160
_NAV_SENTENCE = re.compile(
    r"^(?:go|return|back|continue) to the (?:next|previous|prev|top|index|table of contents|"
    r"contents|main page)\b[\w ]{0,40}\.?$",
    re.I,
)
"""A line that only says where to go next ("Go to the next section or return to the index.")."""
_BREADCRUMBS = re.compile(r"^[^>\n]{1,40}(?:\s>\s[^>\n]{1,40}){2,}$")
"""A trail of links to the pages above ("Apache > HTTP Server > Documentation > Version 2.4")."""
_GENERATED_BY = re.compile(r"^\s*This document was generated (?:by|on|using)\b.*\busing\b", re.S)


def is_chrome(node: Node) -> bool:
    """True for an element that is the page around the document, not the document."""
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
    if words & _CHROME_WORDS or "nav" in attrs.get("class", "").split():  # id="nav": an option
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
            or (_VERSION_BANNER.match(text) and len(text) <= _BANNER_LENGTH)
            or _NAV_SENTENCE.match(text)
            or (_BREADCRUMBS.match(text) and _links_only(node))
        ):
            return True
    return False


def _links_only(node: Node) -> bool:
    """True when every word of ``node`` outside its links is a separator (">")."""
    outside: list[str] = []
    pending: list[Node | str] = list(node.children)
    while pending:
        child = pending.pop()
        if isinstance(child, str):
            outside.append(child)
        elif child.tag != "a":
            pending.extend(child.children)
    return not "".join(outside).replace(">", "").strip()


def _docutils_box(node: Node) -> bool:
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


def is_sidebar(node: Node) -> bool:
    return "sidebar" in node.attrs.get("class", "").split() and _docutils_box(node)


def opens_section(node: Node) -> bool:
    tag = node.tag
    return (
        tag == "section"
        or (len(tag) == 2 and tag[0] == "h" and tag[1] in "123456")
        or (tag == "div" and "section" in node.attrs.get("class", "").split())
    )


def _footnote_furniture(node: Node) -> bool:
    """A footnote's label ("[1]": quoted, it would read as a citation marker) and back-links."""
    parent = node.parent
    return (
        bool({"label", "backrefs"} & set(node.attrs.get("class", "").split()))
        and parent is not None
        and parent.tag == "aside"
        and "footnote" in parent.attrs.get("class", "").split()
    )


def _anchor_list(node: Node) -> bool:
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


def _short_text(node: Node, limit: int = 600) -> str | None:
    """The node's text when it is at most ``limit`` characters (navigation is short), else None;
    the walk stops early, so testing every element of a large page stays linear."""
    parts: list[str] = []
    size = 0
    pending: list[Node | str] = list(reversed(node.children))
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
