"""Built-in agents: ``research`` (phase graph), ``react`` (bounded ReAct loop) and ``router``
(guardrail, routing, retrieval, grading and a cited answer). The agent registry imports each
the first time a run of its type starts, so importing this package registers nothing; each
agent's module is imported when its name is first read here, so a command that runs one agent
loads only that one."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kforge.agents.react import ReactAgent
    from kforge.agents.research import ResearchAgent
    from kforge.agents.router import RouterAgent

__all__ = ["ReactAgent", "ResearchAgent", "RouterAgent"]

_MODULES = {
    "ReactAgent": "kforge.agents.react",
    "ResearchAgent": "kforge.agents.research",
    "RouterAgent": "kforge.agents.router",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'kforge.agents' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)
