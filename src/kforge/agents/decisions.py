"""A model's structured decision that may be unreadable: every decision an agent asks for has
a fallback, so a reply that does not fit its type is None rather than an error."""

from __future__ import annotations

from typing import TypeVar

from kforge.engine.run_context import RunContext
from kforge.errors import ModelOutputError
from kforge.llm.types import Message, ModelSettings

__all__ = ["decide"]

_Reply = TypeVar("_Reply")


async def decide(
    ctx: RunContext,
    messages: list[Message],
    settings: ModelSettings,
    reply: type[_Reply],
    purpose: str,
) -> _Reply | None:
    """The model's reply as ``reply``, or None when it cannot be read as one."""
    try:
        return await ctx.complete(messages, settings, output_type=reply, purpose=purpose)
    except ModelOutputError:
        return None
