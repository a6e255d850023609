"""A tool's services, typed: what the run offers a tool is read by field; a string key is
refused with an error that names the field."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from kforge import Runtime, Services
from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import AgentRegistry
from kforge.store import MemoryStore, RunStatus
from kforge.tools import ToolContext, ToolServices, execute_tool, tool
from tests.engine.sample_agents import OneStepAgent

seen: dict[str, Any] = {}


@tool(read_only=True)
async def by_field(context: ToolContext) -> str:
    """Reads its services by field."""
    services = context.services
    seen.update(
        greeting=services.extra["greeting"],
        agents=services.agents is not None,
        client=services.client,
    )
    return "ok"


@tool(read_only=True)
async def by_key(context: ToolContext) -> str:
    """Reads its services the former way, by string key."""
    services: Any = context.services
    seen.update(greeting=services["greeting"])
    return "ok"


class CallsOneTool(OneStepAgent):
    """Calls the tool named by its arguments once, then ends."""

    agent_type = "test.calls_one_tool"

    async def step(self, ctx: RunContext) -> StepOutcome:
        chosen = {"by_field": by_field, "by_key": by_key}[str(self.args["tool"])]
        result = await execute_tool(ctx, chosen, {})
        return StepOutcome(True, {"text": result.text})


async def run_tool_named(name: str) -> None:
    agents = AgentRegistry()
    agents.register(CallsOneTool.agent_type, CallsOneTool)
    seen.clear()
    rt = Runtime(
        MemoryStore(),
        model=ScriptedModel(),
        registry=agents,
        services=Services(extra={"greeting": "hello"}),
    )
    run = await rt.run(CallsOneTool.agent_type, {"tool": name})
    await rt.aclose()
    assert run.status == RunStatus.COMPLETED, run.error


async def test_a_tool_the_runtime_calls_reads_its_services_by_field_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        await run_tool_named("by_field")
    assert seen == {"greeting": "hello", "agents": True, "client": None}


async def test_a_tool_reading_services_by_string_key_is_told_the_field() -> None:
    with pytest.raises(TypeError, match=r"use context\.services\.extra\['greeting'\]"):
        await by_key.execute({}, ToolContext(services=ToolServices(extra={"greeting": "hi"})))
    with pytest.raises(TypeError, match=r"use context\.services\.agents"):
        ToolServices()["agents"]
    with pytest.raises(TypeError, match=r"use context\.services\.client"):
        ToolServices()["mcp"]
    seen.clear()
    await run_tool_named("by_key")  # inside a run: the tool fails, the run goes on
    assert seen == {}


def test_a_mapping_given_as_a_tool_context_s_services_is_refused() -> None:
    with pytest.raises(TypeError, match=r"ToolServices\(agents=\.\.\., client="):
        ToolContext(services={"agents": object(), "greeting": "hi"})  # type: ignore[arg-type]


def test_services_are_read_only() -> None:
    services = ToolServices(extra={"greeting": "hi"})
    with pytest.raises(TypeError):
        services.extra["other"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        services.agents = None  # type: ignore[misc]
    assert ToolContext().services.agents is None and not ToolContext().services.extra
