"""The router's tools: ``retrieve_chunks`` over a document corpus (from
``kforge.rag.tool``), web search when it is configured, and how their results become passages
to grade and cite."""

from __future__ import annotations

from typing import Any

from kforge.rag.corpus import Corpus
from kforge.rag.tool import hits_from_result, retrieve_chunks_tool
from kforge.rag.types import Chunk, SearchHit
from kforge.tools.base import Tool
from kforge.tools.result import ToolResult

__all__ = [
    "ACTION_HELP",
    "MAX_K",
    "RETRIEVE",
    "WEB_SEARCH",
    "passages_from_result",
    "retrieve_tool",
]

RETRIEVE = "retrieve_chunks"
WEB_SEARCH = "web_search"
"""The router's name for the web search action; the tool behind it may be named otherwise."""
MAX_K = 20
"""The most passages one search may return."""
ACTION_HELP = {
    RETRIEVE: "- retrieve_chunks: search the user's documents; give a search query.",
    WEB_SEARCH: "- web_search: search the web, for recent events or topics the documents lack; "
    "give a search query.",
}
"""How the routing prompt describes each tool action."""


def retrieve_tool(corpus: Corpus) -> Tool:
    """The read-only ``retrieve_chunks`` tool over ``corpus``."""
    return retrieve_chunks_tool(corpus, max_k=MAX_K, name=RETRIEVE)


def passages_from_result(result: ToolResult) -> list[SearchHit]:
    """The passages in a tool result: corpus hits, or web results (title, url, snippet)."""
    if result.is_error or not result.structured_content:
        return []
    if "hits" in result.structured_content:
        return hits_from_result(result)
    results = result.structured_content.get("results")
    if not isinstance(results, list):
        return []
    found = []
    for rank, item in enumerate(results, 1):
        if not isinstance(item, dict) or not item.get("url"):
            continue
        found.append(SearchHit(_web_chunk(item), score=1.0 / rank, rank=rank, retriever="web"))
    return found


def _web_chunk(item: dict[str, Any]) -> Chunk:
    url, title = str(item["url"]), str(item.get("title") or item["url"])
    text = f"{title}\n{item.get('snippet') or ''}".strip()
    return Chunk(
        id=f"web:{url}",
        source=url,
        file=url,
        title=title,
        heading="",
        page=None,
        start=0,
        end=len(text),
        text=text,
    )
