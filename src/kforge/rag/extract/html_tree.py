"""HTML parsed into a forgiving element tree: optional end tags implied, stray end tags
ignored, the page's title and generator noted."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["BLOCK_TAGS", "Node", "TreeBuilder"]

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
BLOCK_TAGS = frozenset(
    {"address", "article", "blockquote", "center", "details", "div", "dl", "fieldset", "figure"}
    | {"figcaption", "hr", "main", "ol", "p", "pre", "section", "summary", "table", "ul", "aside"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "caption", "body", "html", "dd", "dt", "li", "tr"}
)


@dataclass(slots=True)
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)
    parent: Node | None = None


class TreeBuilder(HTMLParser):
    """A forgiving element tree: optional end tags implied, stray end tags ignored."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack: list[Node] = [self.root]
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
            node = Node(tag, values, parent=self.root)
            self.root.children.append(node)
            self.stack = [self.root, node]
            return
        implied = _IMPLIED_END.get(tag)
        if implied is not None or tag in BLOCK_TAGS:
            closes, scope = implied or ({"p"}, set())
            for index in range(len(self.stack) - 1, 0, -1):
                open_tag = self.stack[index].tag
                if open_tag in scope or (implied is None and open_tag != "p"):
                    break
                if open_tag in closes:
                    del self.stack[index:]
                    break
        node = Node(tag, values, parent=self.stack[-1])
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
