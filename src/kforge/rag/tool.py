"""``retrieve_chunks``: corpus search as a read-only tool, and its hits read back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kforge.rag.rerank import search_units
from kforge.rag.types import SearchHit
from kforge.tools.result import ToolResult  # resolved at run time by the tool's schema builder

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus, SearchMode
    from kforge.tools.decorator import FunctionTool

__all__ = ["hits_from_result", "retrieve_chunks_tool"]


def _render(hits: list[SearchHit]) -> str:
    if not hits:
        return "No passages matched. Try other words, or check that documents were ingested."
    blocks = []
    for hit in hits:
        c = hit.chunk
        blocks.append(f"[{hit.rank}] {c.file} ({c.location}) id={c.id}\n{c.text}")
    return "\n\n".join(blocks)


def retrieve_chunks_tool(
    corpus: Corpus,
    *,
    mode: SearchMode = "auto",
    max_k: int = 10,
    name: str = "retrieve_chunks",
    rerank: bool = True,
) -> FunctionTool:
    """A read-only tool that searches ``corpus``; grading stays a separate step of the caller.
    With ``rerank`` (the default) a wider pool is searched and reranked by the sentence, item
    or row of each passage that best holds the query (``kforge.rag.rerank``).

    The result's structured content holds the hits as ``SearchHit.to_dict()`` values, so a
    journaled tool result can be turned back into hits with ``hits_from_result``.
    """
    from kforge.tools.decorator import tool

    def retrieve_chunks(query: str, k: int = 5) -> ToolResult:
        """Search the ingested documents and return the best passages with their file and location.

        Args:
            query: what to look for, as keywords or a question
            k: how many passages to return
        """
        if not query.strip():
            return ToolResult.error("query is empty; give keywords or a question", kind="invalid")
        if not 1 <= k <= max_k:
            return ToolResult.error(f"k must be between 1 and {max_k} (got {k})", kind="invalid")
        hits = (
            search_units(corpus, query, k, mode=mode)
            if rerank
            else corpus.search(query, k, mode=mode)
        )
        return ToolResult.success(_render(hits), {"hits": [h.to_dict() for h in hits]})

    return tool(name=name, read_only=True)(retrieve_chunks)


def hits_from_result(result: ToolResult | dict[str, Any]) -> list[SearchHit]:
    """The hits of a ``retrieve_chunks`` result (or of its ``to_dict()``); [] for an error."""
    structured = (
        result.get("structured_content") if isinstance(result, dict) else result.structured_content
    )
    if not structured or "hits" not in structured:
        return []
    return [SearchHit.from_dict(h) for h in structured["hits"]]
