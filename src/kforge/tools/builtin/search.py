"""``search_web_for_info``: web search through DuckDuckGo's HTML endpoint.

When the endpoint cannot be reached the result is an error of kind ``unreachable``, which
callers turn into a fallback (answer without the web, with a disclaimer).
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

__all__ = ["DUCKDUCKGO_HTML", "SearchHit", "WebSearchTool", "parse_duckduckgo_html"]

DUCKDUCKGO_HTML = "https://html.duckduckgo.com/html/"


@dataclass(frozen=True, slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str

    def to_dict(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url, "snippet": self.snippet}


class _ResultParser(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.hits: list[dict[str, str]] = []
        self.field: str | None = None
        self.depth = 0
        self.in_ad = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div" and (self.in_ad or "result--ad" in classes):
            self.in_ad += 1
        if self.field is not None:
            self.depth += 1
            return
        if self.in_ad:
            return
        if "result__a" in classes:
            href = dict(attrs).get("href") or ""
            self.hits.append(
                {"title": "", "url": _target(urljoin(self.base_url, href)), "snippet": ""}
            )
            self.field, self.depth = "title", 0
        elif "result__snippet" in classes and self.hits:
            self.field, self.depth = "snippet", 0

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self.in_ad:
            self.in_ad -= 1
        if self.field is not None:
            if self.depth == 0:
                self.field = None
            else:
                self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.field is not None and self.hits:
            self.hits[-1][self.field] += data


def _target(href: str) -> str:
    """DuckDuckGo wraps result links as ``/l/?uddg=<encoded target>``."""
    parts = urlsplit(href)
    if parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg")
        if target:
            return target[0]
    return href


def parse_duckduckgo_html(html: str, base_url: str = DUCKDUCKGO_HTML) -> list[SearchHit]:
    parser = _ResultParser(base_url)
    parser.feed(html)
    parser.close()
    return [
        SearchHit(" ".join(h["title"].split()), h["url"], " ".join(h["snippet"].split()))
        for h in parser.hits
        if h["url"].startswith(("http://", "https://"))
    ]


class WebSearchTool(Tool):
    def __init__(self, base_url: str = DUCKDUCKGO_HTML, *, timeout_s: float = 15.0) -> None:
        self.base_url = base_url
        self.request_timeout_s = timeout_s
        self.timeout_s = timeout_s + 5

    @property
    def name(self) -> str:
        return "search_web_for_info"

    @property
    def description(self) -> str:
        return "Search the web and return the top results (title, URL, snippet)."

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "What to search for."},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
            },
            "required": ["query"],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title="Search the web", read_only_hint=True, destructive_hint=False,
            idempotent_hint=False, open_world_hint=True,
        )  # fmt: skip

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        import httpx

        query = arguments["query"]
        limit = int(arguments.get("max_results", 5))
        try:
            async with httpx.AsyncClient(
                timeout=self.request_timeout_s,
                headers={"User-Agent": "Mozilla/5.0 (compatible; kforge)"},
                follow_redirects=True,
            ) as client:
                response = await client.post(self.base_url, data={"q": query, "b": ""})
        except httpx.HTTPError as exc:
            return ToolResult.error(
                f"web search is unreachable: could not reach {self.base_url} "
                f"({type(exc).__name__}: {exc or 'no response'}); answer without web results "
                "and say that the web was not consulted",
                kind="unreachable",
                details={"query": query},
            )
        if response.status_code >= 400:
            return ToolResult.error(
                f"web search failed: {self.base_url} answered HTTP {response.status_code}",
                kind="unreachable" if response.status_code >= 500 else "search_failed",
                details={"query": query, "status": response.status_code},
            )
        hits = parse_duckduckgo_html(response.text, str(response.url))[:limit]
        if not hits:
            return ToolResult.success(
                f"No web results for {query!r}.", {"query": query, "results": []}
            )
        lines = [f"{i}. {h.title}\n   {h.url}\n   {h.snippet}" for i, h in enumerate(hits, 1)]
        return ToolResult.success(
            "\n".join(lines), {"query": query, "results": [h.to_dict() for h in hits]}
        )
