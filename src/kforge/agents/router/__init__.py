"""The router agent: a guardrail, a typed routing decision, tool rounds, graded passages, and
one answering pipeline.

``agent`` holds the agent and its state machine, ``state`` its arguments and saved state,
``grading`` its grading node; ``prompts`` its typed replies and prompts, ``guardrail`` the scope
check, ``tools`` the search tools; the model-only answer is ``kforge.agents.common.answer``.
"""

from __future__ import annotations

from kforge.agents.router.agent import (
    DEFAULT_SCOPE,
    RouterAgent,
    RouterArgs,
    RouterState,
)

__all__ = ["DEFAULT_SCOPE", "RouterAgent", "RouterArgs", "RouterState"]
