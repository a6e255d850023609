"""What the Understand agent's phase modules (``calibrating``, ``teaching``) use of the agent:
declared once here for the type checker; ``UnderstandAgent`` provides all of it."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

from kforge.agents.understand.arguments import UnderstandArgs
from kforge.agents.understand.context import UnderstandPhaseContext
from kforge.engine.run_context import RunContext
from kforge.rag.grounded import AnswerStyle

__all__ = ["UnderstandHost"]


class UnderstandHost:
    """The agent as its phase modules see it (declarations only: nothing at run time)."""

    if TYPE_CHECKING:
        topic: str
        params: UnderstandArgs
        search: dict[str, Any]

        @property
        def rc(self) -> UnderstandPhaseContext: ...

        def phase_prompt(self, phase: enum.Enum) -> str: ...

        def initial_prompt(self, phase: enum.Enum) -> str: ...

        def is_reentry(self, phase: enum.Enum) -> bool: ...

        def _style(self, ctx: RunContext) -> AnswerStyle: ...

        def _nothing_to_teach(self) -> None: ...

        def _count(self, trigger: str, detail: str) -> None: ...

        def _may_backtrack(self, trigger: str) -> bool: ...

        def _numbered(self, source_ids: list[str]) -> list[tuple[int, dict[str, Any]]]: ...

        def _explanation_text(self, objective: dict[str, Any]) -> str: ...
