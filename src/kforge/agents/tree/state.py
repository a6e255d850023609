"""The tree agent's state: everything it has decided and found, saved after every step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["TreeState"]


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
    main: dict[str, Any] = field(default_factory=dict)
    """The main execution's answer: ``{"text", "citations", "path"}``."""
    retrieved: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The tool conversation of the main execution."""
    tool_rounds: int = 0
    comments: list[str] = field(default_factory=list)
    modifications: list[str] = field(default_factory=list)
    resolved: bool = False
    note: str = ""
    """The user's answer to the final question."""
