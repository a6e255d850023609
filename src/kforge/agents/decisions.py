"""The one way an agent asks its model for a structured reply, and decides with a fallback.

``structured`` is ``llm.structured.complete_structured`` over the run's journaled model call:
the reply type is a pydantic model passed as ``output_type``, every call (a retry too) is
recorded and replayed, and a reply that breaks the type is asked again, told what was wrong,
up to ``attempts`` calls in all; then ``ModelOutputError``. ``decide`` is the same for a
decision the agent can do without: after the last attempt it is None, and the run records why
(an ``agent.thinking`` frame), so a fallback is never silent.
"""

from __future__ import annotations

from typing import TypeVar

from kforge.errors import ModelOutputError
from kforge.frames import AgentThinking
from kforge.llm.structured import complete_structured
from kforge.llm.types import Message, ModelSettings
from kforge.memory.compaction import RunHandle, journaled_complete

__all__ = ["REPLY_ATTEMPTS", "decide", "structured"]

_Reply = TypeVar("_Reply")

REPLY_ATTEMPTS = 2
"""Model calls a structured reply gets in all: the first, and one told what was wrong."""


async def structured(
    ctx: RunHandle,
    messages: list[Message],
    settings: ModelSettings | None,
    reply: type[_Reply],
    purpose: str,
    *,
    attempts: int = REPLY_ATTEMPTS,
) -> _Reply:
    """The model's reply as ``reply`` (each call recorded with ``purpose``); raises
    ``ModelOutputError`` naming the field and the rule once ``attempts`` calls broke it."""
    call = journaled_complete(ctx, purpose)
    return await complete_structured(
        call, messages, reply, settings, attempts=attempts, what=purpose
    )


async def decide(
    ctx: RunHandle,
    messages: list[Message],
    settings: ModelSettings,
    reply: type[_Reply],
    purpose: str,
    *,
    attempts: int = REPLY_ATTEMPTS,
) -> _Reply | None:
    """The model's reply as ``reply``, or None (recorded with the reason) when no attempt
    could be read as one."""
    try:
        return await structured(ctx, messages, settings, reply, purpose, attempts=attempts)
    except ModelOutputError as exc:
        ctx.emit(AgentThinking(message=f"{purpose}: going on without the model's reply ({exc})"))
        return None
