"""The tree agent's state: everything it has decided and found, saved after every step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kforge.rag.types import Citation

__all__ = ["MainAnswer", "TreeState"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MainAnswer:
    """The main execution's own answer, before the subagents' are added."""

    text: str
    citations: tuple[Citation, ...] = ()
    """The passages ``text`` cites, numbered as its ``[n]`` markers."""
    path: str = ""
    """Which path wrote it: extractive, generative, tools, ..."""


@dataclass(kw_only=True)
class TreeState:
    """Everything the agent has decided and found; saved after every step."""

    stage: str = "clarify"
    prompt: str = ""
    """The instructions in force (a ``modify`` replaces them)."""
    clarifications: list[dict[str, str]] = field(default_factory=list)
    """Questions asked and the user's answers: ``{"question", "answer"}``."""
    declined: list[str] = field(default_factory=list)
    """Questions the user declined to answer."""
    rounds: int = 0
    questions_done: bool = False
    subagents: list[dict[str, Any]] = field(default_factory=list)
    """``{"id", "prompt"}`` per child, then its ``status`` and ``answer`` once known."""
    main: MainAnswer | None = None
    """The main execution's answer; None until it is written (or after a modify)."""
    retrieved: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The tool conversation of the main execution."""
    tool_rounds: int = 0
    comments: list[str] = field(default_factory=list)
    modifications: list[str] = field(default_factory=list)
    resolved: bool = False
    note: str = ""
    """The user's answer to the final question."""
