"""The ReAct loop: decide, call a tool, observe, reflect on failures, answer.

``react_loop`` runs the steps; ``decision`` reads what the model decided, ``prompts`` holds what
it is asked, ``reflexion`` reacts to failures, ``state`` is what a run keeps, ``config`` its
arguments.
"""

from __future__ import annotations

from kforge.agents.loop.config import LoopConfig
from kforge.agents.loop.react_loop import AnswerCheck, ReactLoop
from kforge.agents.loop.state import LoopState

__all__ = ["AnswerCheck", "LoopConfig", "LoopState", "ReactLoop"]
