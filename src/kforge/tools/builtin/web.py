"""``fetch_page`` and ``summarize_page_content``: read a web page as text, or summarize it.

A model's summary is checked as every answer from documents is (``given_text``); the page's own
most representative sentences stand in for it when it fails, or when there is no model."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from kforge.errors import ToolError
from kforge.llm.base import Model
from kforge.prompts import prompt_text
from kforge.rag.extract import ExtractedDocument
from kforge.rag.extract.html import extract_html
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.builtin.given_text import GENERATED, answer_about, plain_text, text_passages
from kforge.tools.builtin.network import BlockedAddressError, FetchedPage, NetworkPolicy, fetch
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

__all__ = ["FetchPageTool", "SummarizePageTool", "extractive_summary", "page_text"]

_SUMMARY_SYSTEM = prompt_text("WEB_SUMMARY")
_TEXTUAL = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown", "")
_WORD = re.compile(r"[A-Za-z\u00C0-\u024F]{3,}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_STOP = set(
    [
        "the",
        "and",
        "for",
        "are",
        "but",
        "not",
        "you",
        "all",
        "any",
        "can",
        "had",
        "her",
        "was",
        "one",
        "our",
        "out",
        "has",
        "have",
        "this",
        "that",
        "with",
        "from",
        "they",
        "will",
        "would",
        "there",
        "their",
        "what",
        "about",
        "which",
        "when",
        "make",
        "like",
        "than",
        "them",
        "these",
        "then",
        "into",
        "been",
        "more",
        "some",
        "could",
        "other",
        "its",
        "also",
        "only",
        "over",
        "such",
        "after",
        "most",
        "were",
        "just",
        "being",
    ]
)


def page_text(page: FetchedPage) -> tuple[str, str]:
    """``(title, text)`` of a fetched page; refuses content that is not text."""
    if page.content_type not in _TEXTUAL:
        raise ToolError(
            f"{page.url} is {page.content_type}, not a web page; only HTML and plain text can be "
            "read"
        )
    if page.content_type in ("text/html", "application/xhtml+xml") or "<html" in page.text[:500]:
        doc = extract_html(page.text, fallback_title="")
        return doc.title, _outline(doc)
    return "", page.text


def _outline(doc: ExtractedDocument) -> str:
    """A line per paragraph, each heading marked with as many ``#`` as its level."""
    parts: list[str] = []
    pos = 0
    for section in doc.sections:
        parts += [doc.text[pos : section.start], "#" * section.level + " "]
        pos = section.start
    parts.append(doc.text[pos:])
    lines = (" ".join(line.split()) for line in "".join(parts).splitlines())
    return "\n".join(line for line in lines if line)


async def _get(url: str, policy: NetworkPolicy) -> tuple[FetchedPage, str, str] | ToolResult:
    try:
        page = await fetch(url, policy)
        if page.status >= 400:
            return ToolResult.error(
                f"{url} answered HTTP {page.status}",
                kind="http_error",
                details={"status": page.status},
            )
        title, text = page_text(page)
    except BlockedAddressError as exc:
        return ToolResult.error(str(exc), kind="blocked")
    except ToolError as exc:
        return ToolResult.error(str(exc), kind="unreachable")
    return page, title, text


class FetchPageTool(Tool):
    def __init__(self, policy: NetworkPolicy | None = None) -> None:
        self.policy = policy or NetworkPolicy()
        self.timeout_s = self.policy.timeout_s * 2

    @property
    def name(self) -> str:
        return "fetch_page"

    @property
    def description(self) -> str:
        return "Fetch a web page and return its readable text (title, headings, paragraphs)."

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "http or https URL of the page."},
                "max_chars": {
                    "type": "integer",
                    "minimum": 100,
                    "maximum": 200_000,
                    "default": 20_000,
                    "description": "Longest text to return.",
                },
            },
            "required": ["url"],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations.read_only(title="Fetch a web page", open_world=True)

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        got = await _get(arguments["url"], self.policy)
        if isinstance(got, ToolResult):
            return got
        page, title, text = got
        limit = int(arguments.get("max_chars", 20_000))
        cut = len(text) > limit or page.truncated
        body = text[:limit]
        header = f"{title}\n{page.url}\n\n" if title else f"{page.url}\n\n"
        return ToolResult.success(
            header + body + ("\n[... truncated]" if cut else ""),
            {"url": page.url, "title": title, "text": body, "truncated": cut},
        )


class SummarizePageTool(Tool):
    """Summarizes with a model when one is available, otherwise extractively."""

    def __init__(self, policy: NetworkPolicy | None = None, model: Model | None = None) -> None:
        self.policy = policy or NetworkPolicy()
        self.model = model
        self.timeout_s = self.policy.timeout_s * 2 + 120

    @property
    def name(self) -> str:
        return "summarize_page_content"

    @property
    def description(self) -> str:
        return (
            "Summarize a web page (by URL) or a given text in a few sentences, optionally "
            "focusing on a question."
        )

    @property
    def input_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "Page to summarize."},
                "text": {"type": "string", "description": "Text to summarize instead of a URL."},
                "focus": {"type": "string", "description": "What the summary should focus on."},
                "max_sentences": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
            },
            "anyOf": [{"required": ["url"]}, {"required": ["text"]}],
            "additionalProperties": False,
        }

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title="Summarize a page", read_only_hint=True, destructive_hint=False,
            idempotent_hint=False, open_world_hint=True,
        )  # fmt: skip

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        source = arguments.get("url", "")
        title = ""
        if "text" in arguments:
            text = arguments["text"]
        else:
            got = await _get(source, self.policy)
            if isinstance(got, ToolResult):
                return got
            page, title, text = got
            source = page.url
        if not text.strip():
            return ToolResult.error(f"nothing to summarize: {source or 'the text'} is empty")
        sentences = int(arguments.get("max_sentences", 5))
        focus = arguments.get("focus", "")
        model = self.model or (context.model if context else None)
        method, note, reason = "extractive", "", "no model"
        summary = ""
        if model is not None:
            ask = f"Summarize the text in at most {sentences} sentences"
            answer = await answer_about(
                model,
                ask + (f", focusing on {focus}." if focus else "."),
                text_passages(title or "text", text[:12_000]),
                system=_SUMMARY_SYSTEM,
                max_sentences=sentences,
            )
            reason = answer.reason
            if answer.path in GENERATED:
                summary, method = plain_text(answer, sentences), "model"
            elif answer.path == "extractive_fallback":
                note = (
                    "\n\n(The model's summary was not supported by the text; these are the "
                    "text's own sentences instead.)"
                )
        summary = summary or extractive_summary(text, sentences, focus)
        structured = {
            "source": source,
            "title": title,
            "summary": summary,
            "method": method,
            "reason": reason,
        }
        return ToolResult.success(summary + note, structured)


def extractive_summary(text: str, max_sentences: int = 5, focus: str = "") -> str:
    """The most representative sentences, in their original order (word-frequency scoring)."""
    sentences = [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]
    if len(sentences) <= max_sentences:
        return " ".join(sentences)
    words = Counter(w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP)
    boost = {w.lower() for w in _WORD.findall(focus)}

    def score(index: int) -> float:
        tokens = [w.lower() for w in _WORD.findall(sentences[index])]
        if not tokens:
            return 0.0
        base = sum(words[t] for t in tokens if t not in _STOP) / len(tokens)
        bonus = 2.0 * sum(1 for t in tokens if t in boost)
        lead = 0.5 if index == 0 else 0.0
        return base + bonus + lead

    best = sorted(range(len(sentences)), key=score, reverse=True)[:max_sentences]
    return " ".join(sentences[i] for i in sorted(best))
