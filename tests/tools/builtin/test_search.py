"""search_web_for_info against a local server speaking DuckDuckGo's HTML result format."""

from __future__ import annotations

import socket
from urllib.parse import parse_qs, quote

from kforge.tools.builtin.search import WebSearchTool, parse_duckduckgo_html

from .conftest import LocalServer, Reply, Request


def result_page(*hits: tuple[str, str, str]) -> str:
    blocks = [
        '<div class="result results_links result--ad"><a class="result__a" '
        'href="https://ads.example/">Sponsored</a></div>'
    ]
    for title, url, snippet in hits:
        blocks.append(
            '<div class="result results_links results_links_deep web-result">'
            '<h2 class="result__title"><a rel="nofollow" class="result__a" '
            f'href="//duckduckgo.com/l/?uddg={quote(url, safe="")}&amp;rut=abc">{title}</a></h2>'
            f'<a class="result__snippet" href="x">{snippet}</a></div>'
        )
    return f"<html><body>{''.join(blocks)}</body></html>"


def test_parser_unwraps_links_and_skips_ads() -> None:
    hits = parse_duckduckgo_html(
        result_page(
            (
                "Vision <b>Transformers</b>",
                "https://arxiv.org/abs/2010.11929",
                "An <b>image</b> is worth",
            )
        )
    )
    assert [h.to_dict() for h in hits] == [
        {
            "title": "Vision Transformers",
            "url": "https://arxiv.org/abs/2010.11929",
            "snippet": "An image is worth",
        }
    ]


async def test_search_posts_the_query_and_returns_hits(server: LocalServer) -> None:
    def search(request: Request) -> Reply:
        query = parse_qs(request.body.decode())["q"][0]
        return Reply(
            200,
            result_page(
                (f"About {query}", "https://example.org/a", "first"),
                ("Second", "https://example.org/b", "second"),
                ("Third", "https://example.org/c", "third"),
            ),
            {"Content-Type": "text/html"},
        )

    server.route("POST", "/html/", search)
    tool = WebSearchTool(f"{server.url}/html/")
    result = await tool.execute({"query": "vision transformer", "max_results": 2})
    assert not result.is_error
    assert result.structured_content is not None
    results = result.structured_content["results"]
    assert [r["url"] for r in results] == ["https://example.org/a", "https://example.org/b"]
    assert results[0]["title"] == "About vision transformer"
    assert "1. About vision transformer" in result.text


async def test_no_results_is_not_an_error(server: LocalServer) -> None:
    server.route("POST", "/html/", Reply(200, "<html><body>No results.</body></html>"))
    result = await WebSearchTool(f"{server.url}/html/").execute({"query": "zzqx"})
    assert not result.is_error and result.structured_content == {"query": "zzqx", "results": []}


async def test_unreachable_search_is_a_clear_error_for_fallback() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tool = WebSearchTool(f"http://127.0.0.1:{port}/html/", timeout_s=5)
    result = await tool.execute({"query": "anything"})
    assert result.is_error and result.error_kind == "unreachable"
    assert "web search is unreachable" in result.text
    assert "answer without web results" in result.text


async def test_server_error_is_reported(server: LocalServer) -> None:
    server.route("POST", "/html/", Reply(503, "busy"))
    result = await WebSearchTool(f"{server.url}/html/").execute({"query": "x"})
    assert result.is_error and "HTTP 503" in result.text and result.error_kind == "unreachable"
