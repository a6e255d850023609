"""Shared pieces of the agent tests: tools, a runtime over an in-memory store, frame queries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from kforge.agents.react import ReactAgent
from kforge.agents.router import RouterAgent
from kforge.engine.services import Services
from kforge.frames import Frame, ModelCall, ToolResultFrame
from kforge.llm.base import Model
from kforge.llm.types import Message
from kforge.runtime import AgentRegistry, Runtime
from kforge.runtime.history import call_prompt
from kforge.store.base import RunLog
from kforge.store.memory import MemoryStore
from kforge.tools import ToolAnnotations, ToolRegistry, tool

F = TypeVar("F", bound=Frame)

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi"}


@tool(read_only=True)
def lookup_capital(country: str) -> str:
    """Look up the capital city of a country.

    Args:
        country: The country's English name, e.g. France.
    """
    if country not in CAPITALS:
        raise LookupError(f"country '{country}' not found; use the English name, e.g. France")
    return f"The capital of {country} is {CAPITALS[country]}."


@tool(read_only=True)
def word_count(text: str) -> int:
    """Count the words of a text.

    Args:
        text: Any text.
    """
    return len(text.split())


class Counter:
    """A side-effecting tool that counts how often it really ran."""

    def __init__(self) -> None:
        self.calls = 0

        @tool(annotations=ToolAnnotations(destructive_hint=False))
        def record_note(note: str) -> str:
            """Append a note to the notebook.

            Args:
                note: The note to keep.
            """
            self.calls += 1
            return f"noted ({self.calls}): {note}"

        self.tool = record_note


def registry() -> AgentRegistry:
    agents = AgentRegistry()
    agents.register(ReactAgent.agent_type, ReactAgent)
    agents.register(RouterAgent.agent_type, RouterAgent)
    return agents


def runtime(model: Model, *tools: Any, store: MemoryStore | None = None) -> Runtime:
    chosen = list(tools) or [lookup_capital, word_count]
    return Runtime(
        store or MemoryStore(),
        model=model,
        registry=registry(),
        services=Services(tools=ToolRegistry(chosen)),
    )


def of_type(frames: Sequence[Frame], cls: type[F]) -> list[F]:
    return [f for f in frames if isinstance(f, cls)]


def failures(frames: Sequence[Frame]) -> list[ToolResultFrame]:
    """The result frames of tool calls that failed."""
    return [f for f in of_type(frames, ToolResultFrame) if not f.success]


def prompt_text(messages: Sequence[Any]) -> str:
    return "\n".join(m.content for m in messages)


def rebuilt_prompts(store: RunLog, run_id: str) -> tuple[list[list[Message]], int]:
    """Each model call's rebuilt prompt, and the bytes the calls' frames spend on prompts."""
    calls = [f for f in store.read_frames(run_id) if isinstance(f, ModelCall)]
    rebuilt = []
    for frame in calls:
        prompt = call_prompt(store, run_id, frame.seq)
        assert prompt.recorded
        rebuilt.append(list(prompt.messages))
    return rebuilt, sum(len(json.dumps(f.prompt_delta)) for f in calls)
