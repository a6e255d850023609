"""The execution wrapper: frames, approval, timeouts, caching, and durable replay."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kforge.engine.limits import RunLimits
from kforge.engine.run_context import RunContext, Suspended
from kforge.engine.services import Services
from kforge.frames import (
    Frame,
    InteractionAnswered,
    InteractionRequested,
    ToolCallFrame,
    ToolResultFrame,
)
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import ToolCall
from kforge.tools import (
    ApprovalPolicy,
    ToolAnnotations,
    ToolContext,
    ToolRegistry,
    ToolResultCache,
    execute_call,
    execute_tool,
    tool,
)
from kforge.tools.execution import APPROVAL_SERVICE


class Log:
    """Collects what the context commits, so tests can see durable points."""

    def __init__(self) -> None:
        self.committed: list[Frame] = []
        self.flushes = 0

    def __call__(self, frames: list[Frame]) -> None:
        self.flushes += 1
        self.committed.extend(frames)


def make_ctx(log: Log | None = None, **services: Any) -> RunContext:
    approval = services.pop(APPROVAL_SERVICE, None)
    return RunContext(
        run_id="run-1",
        agent_type="test",
        model=ScriptedModel(),
        limits=RunLimits(),
        next_seq=1,
        flush=log or Log(),
        services=Services(approval=approval, extra=services),
    )


calls: list[str] = []


@tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: which key
    """
    calls.append(key)
    return f"value of {key}"


@tool(annotations=ToolAnnotations(destructive_hint=False))
def create_note(title: str) -> dict[str, str]:
    """Create a note (a side effect that is not destructive)."""
    calls.append(title)
    return {"id": "n1", "title": title}


@tool
def delete_everything(scope: str) -> str:
    """Delete things (destructive by default)."""
    calls.append(scope)
    return f"deleted {scope}"


@pytest.fixture(autouse=True)
def _reset() -> None:
    calls.clear()


def frames_of(ctx: RunContext) -> list[Frame]:
    return ctx.take_pending()


async def test_success_emits_a_call_and_its_result_with_result_json() -> None:
    ctx = make_ctx()
    result = await execute_tool(ctx, lookup, {"key": "a"})
    assert not result.is_error and result.text == "value of a"
    start, success = frames_of(ctx)
    assert isinstance(start, ToolCallFrame) and start.arguments == {"key": "a"} and start.read_only
    assert isinstance(success, ToolResultFrame) and success.success
    assert success.call_id == start.call_id
    assert success.summary == "value of a" and success.error == ""
    assert success.result["content"][0]["text"] == "value of a"
    assert success.execution_time_ms >= 0


async def test_invalid_arguments_become_an_error_naming_the_field() -> None:
    ctx = make_ctx()
    result = await execute_tool(ctx, lookup, {"key": 5})
    assert result.is_error and result.error_kind == "invalid_arguments"
    assert "argument 'key' must be a string (got 5)" in result.text
    assert calls == []
    _, error = frames_of(ctx)
    assert isinstance(error, ToolResultFrame) and not error.success and "key" in error.error


async def test_exception_in_tool_becomes_error_result() -> None:
    @tool(read_only=True)
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    ctx = make_ctx()
    result = await execute_tool(ctx, broken, {})
    assert result.is_error and "RuntimeError: disk on fire" in result.text
    last = frames_of(ctx)[-1]
    assert isinstance(last, ToolResultFrame) and not last.success


async def test_timeout_becomes_error_result() -> None:
    @tool(read_only=True, timeout_s=0.05)
    async def slow() -> str:
        """Never finishes in time."""
        await asyncio.sleep(30)
        return "late"

    result = await execute_tool(make_ctx(), slow, {})
    assert result.is_error and result.error_kind == "timeout"
    assert "did not finish within 0.05 s" in result.text


async def test_unknown_tool_is_an_error_listing_available_tools() -> None:
    ctx = make_ctx()
    registry = ToolRegistry([lookup])
    result = await execute_call(ctx, registry, ToolCall("lokup", {"key": "a"}))
    assert result.is_error and result.error_kind == "unknown_tool"
    assert "unknown tool 'lokup'; available tools: lookup" in result.text


async def test_non_read_only_tool_commits_its_start_before_running() -> None:
    log = Log()
    ctx = make_ctx(log)
    seen_committed: list[list[str]] = []

    @tool(annotations=ToolAnnotations(destructive_hint=False))
    def side_effect() -> str:
        """Records what was durable when it ran."""
        seen_committed.append([f.type for f in log.committed])
        return "ok"

    await execute_tool(ctx, side_effect, {})
    assert seen_committed == [["tool.call"]]


async def test_destructive_tool_suspends_for_approval_then_runs_when_approved() -> None:
    ctx = make_ctx()
    with pytest.raises(Suspended) as info:
        await execute_tool(ctx, delete_everything, {"scope": "tmp"}, reasoning="cleanup")
    request = info.value.request
    assert request.kind == "approval" and request.options == ("approve", "reject")
    assert request.payload["tool"] == "delete_everything"
    assert request.payload["arguments"] == {"scope": "tmp"}
    assert calls == []

    # The runtime commits the request, records the answer, and re-executes the step.
    journal = [
        *frames_of(ctx),
        InteractionAnswered(interaction_id="i", answer={"action": "approve"}),
    ]
    log = Log()
    resumed = make_ctx(log)
    resumed.begin_step(1, journal)
    result = await execute_tool(resumed, delete_everything, {"scope": "tmp"}, reasoning="cleanup")
    assert result.text == "deleted tmp" and calls == ["tmp"]
    assert [f.type for f in log.committed] == ["tool.call"]
    assert [f.type for f in frames_of(resumed)] == ["tool.result"]


async def test_rejected_approval_is_an_error_result_with_the_reason() -> None:
    ctx = make_ctx()
    with pytest.raises(Suspended):
        await execute_tool(ctx, delete_everything, {"scope": "all"})
    journal = [
        *frames_of(ctx),
        InteractionAnswered(interaction_id="i", answer={"action": "reject", "reason": "too broad"}),
    ]
    resumed = make_ctx()
    resumed.begin_step(1, journal)
    result = await execute_tool(resumed, delete_everything, {"scope": "all"})
    assert result.is_error and result.error_kind == "rejected"
    assert "rejected the call to 'delete_everything': too broad" in result.text
    assert calls == []


async def test_approval_policy_allow_list_and_auto_approve() -> None:
    allowed = make_ctx(**{APPROVAL_SERVICE: ApprovalPolicy.of(allow=["delete_everything"])})
    assert (await execute_tool(allowed, delete_everything, {"scope": "x"})).text == "deleted x"
    auto = make_ctx()
    result = await execute_tool(
        auto, delete_everything, {"scope": "y"}, policy=ApprovalPolicy(auto_approve=True)
    )
    assert result.text == "deleted y"
    forced = make_ctx()
    with pytest.raises(Suspended):
        await execute_tool(forced, lookup, {"key": "k"}, policy=ApprovalPolicy.of(ask=["lookup"]))


async def test_replayed_step_returns_recorded_result_without_running_again() -> None:
    log = Log()
    ctx = make_ctx(log)
    await execute_tool(ctx, create_note, {"title": "t"})
    journal = [*log.committed, *frames_of(ctx)]
    assert [f.type for f in journal] == ["tool.call", "tool.result"]
    assert calls == ["t"]
    resumed = make_ctx()
    resumed.begin_step(1, journal)
    result = await execute_tool(resumed, create_note, {"title": "t"})
    assert calls == ["t"]
    assert result.structured_content == {"id": "n1", "title": "t"}
    assert frames_of(resumed) == []


async def test_started_side_effect_without_result_is_not_rerun() -> None:
    ctx = make_ctx()
    start = ctx.emit(ToolCallFrame(tool_name="create_note", call_id="c1", arguments={"title": "t"}))
    resumed = make_ctx()
    resumed.begin_step(1, [start])
    result = await execute_tool(resumed, create_note, {"title": "t"})
    assert calls == []
    assert result.is_error and result.error_kind == "outcome_unknown"
    assert "whether it took effect is unknown" in result.text
    (error,) = frames_of(resumed)
    assert isinstance(error, ToolResultFrame) and not error.success and error.call_id == "c1"


async def test_started_read_only_tool_without_result_runs_again() -> None:
    ctx = make_ctx()
    start = ctx.emit(
        ToolCallFrame(tool_name="lookup", call_id="c1", arguments={"key": "k"}, read_only=True)
    )
    resumed = make_ctx()
    resumed.begin_step(1, [start])
    result = await execute_tool(resumed, lookup, {"key": "k"})
    assert result.text == "value of k" and calls == ["k"]


async def test_read_only_results_are_cached() -> None:
    cache = ToolResultCache()
    first = make_ctx()
    await execute_tool(first, lookup, {"key": "a"}, cache=cache)
    second = make_ctx()
    result = await execute_tool(second, lookup, {"key": "a"}, cache=cache)
    assert result.text == "value of a" and calls == ["a"]
    success = frames_of(second)[-1]
    assert isinstance(success, ToolResultFrame) and success.cached
    await execute_tool(make_ctx(), create_note, {"title": "n"}, cache=cache)
    await execute_tool(make_ctx(), create_note, {"title": "n"}, cache=cache)
    assert calls == ["a", "n", "n"]


async def test_tool_receives_run_services_through_its_context() -> None:
    seen: dict[str, Any] = {}

    @tool(read_only=True)
    def whoami(context: ToolContext) -> str:
        """Reports its context."""
        seen.update(run=context.run_id, service=context.services.extra["thing"])
        return "ok"

    await execute_tool(make_ctx(thing=42), whoami, {})
    assert seen == {"run": "run-1", "service": 42}
    assert "context" not in whoami.input_schema["properties"]


def test_interaction_frames_are_real_frame_types() -> None:
    assert InteractionRequested.TYPE == "interaction.requested"


async def test_a_call_without_a_policy_or_arguments_mapping_builds_neither_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run with no approval policy uses the default one made once, and a function tool
    reads its argument names once: neither is built again for every call."""
    import pydantic

    from kforge.tools import execution

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("built again for one call")

    monkeypatch.setattr(execution, "ApprovalPolicy", refuse)
    # pydantic builds the class's field mapping each time it is asked for
    monkeypatch.setattr(type(lookup._model), "model_fields", property(refuse), raising=False)
    ctx = make_ctx()
    result = await execute_tool(ctx, lookup, {"key": "k"})
    assert result.text == "value of k" and not result.is_error
    monkeypatch.undo()
    assert isinstance(lookup._model.model_fields["key"], pydantic.fields.FieldInfo)
