"""The agent tree: the six-step ``tree`` agent whose subquestions are subagents."""

from __future__ import annotations

from kforge.agents.tree.agent import STEPS, TreeAgent
from kforge.agents.tree.arguments import TreeArgs
from kforge.agents.tree.state import TreeState

__all__ = ["STEPS", "TreeAgent", "TreeArgs", "TreeState"]
