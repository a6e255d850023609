"""The router agent's typed decisions and prompts: the guardrail's verdict, the
``RouterDecision`` and the answer with citations."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StrictBool, create_model

from kforge.llm.structured import decoder_bounds
from kforge.prompts import prompt_text

__all__ = [
    "GENERATE",
    "GuardrailVerdict",
    "RouterDecision",
    "RouterReply",
    "guardrail_system",
    "router_reply",
    "router_system",
]

GENERATE = "generate"
"""The router's decision to stop using tools and write the answer."""


def guardrail_system(scope: str) -> str:
    """The guardrail's system prompt for an assistant about ``scope``."""
    return prompt_text("ROUTER_GUARDRAIL", scope=scope)


def router_system(actions: str) -> str:
    """The router's system prompt offering ``actions`` (one ``- name: what it does`` line each)."""
    return prompt_text("ROUTER", actions=actions)


_DECODER_ONLY = ConfigDict(json_schema_extra={"additionalProperties": False})
"""No other keys while decoding; a reply with more is still read."""


class GuardrailVerdict(BaseModel):
    """In scope or not, and why: the guardrail's reply, read as it is."""

    model_config = ConfigDict(
        frozen=True,
        str_strip_whitespace=True,
        json_schema_extra={"additionalProperties": False},
    )

    reason: Annotated[str, decoder_bounds(min_length=1, max_length=120)]
    in_scope: StrictBool


class RouterReply(BaseModel):
    """The router's reply; its ``action`` is narrowed to the offered tools by ``router_reply``."""

    model_config = _DECODER_ONLY

    reasoning: Annotated[str, decoder_bounds(min_length=1, max_length=160)]
    action: str
    query: Annotated[str, decoder_bounds(max_length=120)]


@lru_cache(maxsize=32)
def router_reply(actions: tuple[str, ...]) -> type[RouterReply]:
    """The ``RouterReply`` whose ``action`` is one of ``actions`` or ``generate``."""
    choice = Literal[(*actions, GENERATE)]  # type: ignore[valid-type]
    return create_model(
        "RouterReply", __base__=RouterReply, __doc__=RouterReply.__doc__, action=(choice, ...)
    )


@dataclass(frozen=True, slots=True)
class RouterDecision:
    """The router's typed decision: which tool to run next (or ``generate``), with what query and why."""

    action: str
    query: str
    reasoning: str

    @property
    def generates(self) -> bool:
        return self.action == GENERATE

    @classmethod
    def from_reply(cls, reply: RouterReply) -> RouterDecision:
        return cls(reply.action, " ".join(reply.query.split()), reply.reasoning.strip())
