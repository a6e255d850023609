"""What the Research agent's phase modules (``decomposing``, ``answering``) use of the agent:
declared once here for the type checker; ``ResearchAgent`` provides all of it."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from kforge.agents.research.arguments import ResearchArgs
from kforge.agents.research.question_tree import ResearchPhaseContext
from kforge.engine.run_context import RunContext
from kforge.rag.focus import Focus
from kforge.rag.grounded import AnswerStyle

__all__ = ["ResearchHost"]


class ResearchHost:
    """The agent as its phase modules see it (declarations only: nothing at run time)."""

    if TYPE_CHECKING:
        question: str
        corpus_name: str | None
        params: ResearchArgs

        @property
        def rc(self) -> ResearchPhaseContext: ...

        def phase_prompt(self, phase: enum.Enum) -> str: ...

        def initial_prompt(self, phase: enum.Enum) -> str: ...

        def is_reentry(self, phase: enum.Enum) -> bool: ...

        async def _discovered(self, ctx: RunContext, value: str) -> str: ...

        def _may_backtrack(self, trigger: str) -> bool: ...

        async def _model_only(self, ctx: RunContext, question: str) -> str: ...

        def _said(self) -> set[str]: ...

        def _style(self, ctx: RunContext) -> AnswerStyle: ...

        def _foci(self) -> list[Focus]: ...

        def _about_question(self, text: str) -> bool: ...

        def _restates_question(self, text: str) -> bool: ...
