"""A tool's services, typed: what the run offers a tool is read by field; the former
string-keyed form still works for one release, with a warning that names the field."""

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
    seen.update(greeting=services["greeting"], agents=services.get("agents") is not None)
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


async def test_a_tool_reading_services_by_string_key_still_works_and_is_told_the_field() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        await run_tool_named("by_key")
    assert seen == {"greeting": "hello", "agents": True}
    messages = [str(w.message) for w in caught]
    assert any("use context.services.extra['greeting']" in m for m in messages), messages
    assert any("use context.services.agents" in m for m in messages), messages


async def test_a_mapping_given_as_a_tool_context_s_services_is_read_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"ToolServices\(agents=\.\.\., client="):
        context = ToolContext(services={"agents": object(), "greeting": "hi"})  # type: ignore[arg-type]
    assert context.services.extra == {"greeting": "hi"}
    assert context.services.agents is not None
    seen.clear()
    with pytest.warns(DeprecationWarning) as caught:
        await by_key.execute({}, context)
    assert seen == {"greeting": "hi", "agents": True}
    assert {str(w.message).split(";")[0] for w in caught} == {
        "ToolContext.services['greeting'] is deprecated",
        "ToolContext.services['agents'] is deprecated",
    }


def test_services_are_read_only() -> None:
    services = ToolServices(extra={"greeting": "hi"})
    with pytest.raises(TypeError):
        services.extra["other"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        services.agents = None  # type: ignore[misc]
    assert ToolContext().services.agents is None and len(ToolContext().services) == 0
