"""Built-in tools: web fetch, summarize and search, explanation, OCR, Python, Plane and Zulip."""

from __future__ import annotations

from pathlib import Path

from kforge.llm.base import Model
from kforge.tools.base import Tool
from kforge.tools.builtin.explain import ExplainTextTool
from kforge.tools.builtin.network import NetworkPolicy
from kforge.tools.builtin.ocr import OcrTool
from kforge.tools.builtin.plane import PlaneClient, PlaneCreateTaskTool, PlaneQueryTasksTool
from kforge.tools.builtin.python import AgentSpawner, PythonTool
from kforge.tools.builtin.sandbox import SandboxLimits
from kforge.tools.builtin.search import DUCKDUCKGO_HTML, WebSearchTool
from kforge.tools.builtin.web import FetchPageTool, SummarizePageTool
from kforge.tools.builtin.zulip import ZulipSendTool

__all__ = [
    "DUCKDUCKGO_HTML",
    "AgentSpawner",
    "ExplainTextTool",
    "FetchPageTool",
    "NetworkPolicy",
    "OcrTool",
    "PlaneClient",
    "PlaneCreateTaskTool",
    "PlaneQueryTasksTool",
    "PythonTool",
    "SandboxLimits",
    "SummarizePageTool",
    "WebSearchTool",
    "ZulipSendTool",
    "default_tools",
]


def default_tools(
    *,
    model: Model | None = None,
    network: NetworkPolicy | None = None,
    search_url: str = DUCKDUCKGO_HTML,
    files_dir: Path | None = None,
    python: bool = True,
    sandbox: SandboxLimits | None = None,
) -> list[Tool]:
    """The built-in tools that need no account: web, explanation, OCR and (optionally) Python.

    Plane and Zulip need credentials, so they are built separately.
    """
    network = network or NetworkPolicy()
    tools: list[Tool] = [
        FetchPageTool(network),
        SummarizePageTool(network, model),
        WebSearchTool(search_url),
        ExplainTextTool(model),
        OcrTool(base_dir=files_dir),
    ]
    if python:
        tools.append(PythonTool(sandbox))
    return tools
