"""Reflexion: reflections from the model (or rules when its output is unusable), stored and found
again for later attempts, repeated errors, and alternatives that never repeat a
failed call."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kforge.errors import ModelUnavailableError, ScriptedModelError
from kforge.frames import Frame, ModelCall, Reflection, UsageFrame
from kforge.llm.structured import schema_for
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolCall, ToolSpec
from kforge.memory.episodic import EpisodicMemory, ReflectionRecord
from kforge.memory.reflexion import (
    ERROR_TYPES,
    ReflectionReply,
    classify_error,
    format_reflections,
    generate_reflection,
    reflect_in_run,
    reflect_on_failure,
    suggest_alternative,
)
from kforge.store import MemoryStore, SQLiteStore
from tests.step_context import step_context

SEARCH = ToolCall("search", {"query": "solar panel efficiency", "limit": 5})
GOOD = {
    "error_type": "invalid_arguments",
    "analysis": "limit must be at most 3 for this search backend.",
    "suggested_fix": "Call search again with limit 3.",
}
TOOLS = [
    ToolSpec("search", "Search the web", {"type": "object"}),
    ToolSpec("fetch_page", "Fetch a page", {"type": "object"}),
]


async def test_reflection_comes_from_the_model_as_structured_output() -> None:
    with ScriptedModel([GOOD]) as model:
        draft = await generate_reflection(
            model.complete, SEARCH, "limit: must be <= 3", goal="compare panels"
        )
    assert draft.from_model
    assert (draft.error_type, draft.analysis, draft.suggested_fix) == (
        "invalid_arguments",
        GOOD["analysis"],
        GOOD["suggested_fix"],
    )
    call = model.calls[0]
    assert call.output_schema == schema_for(ReflectionReply)
    request = call.messages[-1].content
    assert "Goal: compare panels" in request
    assert '"name": "search"' in request and "limit: must be <= 3" in request


@pytest.mark.parametrize(
    "reply",
    [
        ModelResponse(text="I think the limit was wrong"),
        ModelResponse(text="[1, 2]", parsed=[1, 2]),
        ModelResponse(parsed={"error_type": "timeout", "suggested_fix": "retry"}),
        ModelResponse(parsed={"error_type": "timeout", "analysis": "slow", "suggested_fix": ""}),
        ModelResponse(parsed={"error_type": "timeout", "analysis": 7, "suggested_fix": "x"}),
        ModelResponse(parsed={"error_type": None, "analysis": "a", "suggested_fix": "b"}),
    ],
    ids=["prose", "list", "missing-field", "empty-fix", "wrong-type", "null-type"],
)
async def test_unusable_model_output_falls_back_to_a_rule_based_reflection(
    reply: ModelResponse,
) -> None:
    with ScriptedModel([reply]) as model:
        draft = await generate_reflection(model.complete, SEARCH, "HTTP 404: no such index")
    assert not draft.from_model
    assert draft.error_type == "not_found"
    assert "search" in draft.analysis and "HTTP 404: no such index" in draft.analysis
    assert draft.suggested_fix.startswith("For 'search': check the name")


async def test_model_output_given_as_json_text_is_used_and_unknown_types_are_classified() -> None:
    reply = ModelResponse(
        text='{"error_type": "Weird Thing", "analysis": "a", "suggested_fix": "b"}'
    )
    with ScriptedModel([reply]) as model:
        draft = await generate_reflection(model.complete, SEARCH, "request timed out after 30 s")
    assert draft.from_model and (draft.analysis, draft.suggested_fix) == ("a", "b")
    assert draft.error_type == "timeout"
    with ScriptedModel([{**GOOD, "error_type": "rate_limited"}]) as model:
        draft = await generate_reflection(model.complete, SEARCH, "boom")
    assert draft.error_type == "rate_limited"


async def test_a_failing_model_falls_back_and_a_misscripted_model_fails_loudly() -> None:
    async def unavailable(
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        raise ModelUnavailableError("server unreachable")

    draft = await generate_reflection(unavailable, SEARCH, "permission denied", kind="tool")
    assert (draft.from_model, draft.error_type) == (False, "permission_denied")
    with pytest.raises(ScriptedModelError):
        await generate_reflection(ScriptedModel().complete, SEARCH, "x")


@pytest.mark.parametrize(
    ("error", "kind", "expected"),
    [
        ("Request timed out", "tool", "timeout"),
        ("429 Too Many Requests", "tool", "rate_limited"),
        ("403 Forbidden", "tool", "permission_denied"),
        ("file does not exist", "tool", "not_found"),
        ("argument 'limit' must be an integer", "tool", "invalid_arguments"),
        ("no results", "tool", "empty_result"),
        ("segfault", "tool", "tool_error"),
        ("grade: 1 of 5 relevant", "check", "check_failed"),
    ],
)
def test_classify_error(error: str, kind: Any, expected: str) -> None:
    assert classify_error(error, kind) == expected
    assert expected in ERROR_TYPES


async def test_reflections_are_stored_retrieved_and_repeated_errors_detected() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react", user_id="ana")
    with ScriptedModel([GOOD, GOOD]) as model:
        first = await reflect_on_failure(model.complete, memory, SEARCH, "limit too high")
        retry = ToolCall("search", {"query": "solar panel efficiency", "limit": 4})
        assert memory.relevant(retry) == [first]
        assert not first.repeated
        second = await reflect_on_failure(
            model.complete, memory, retry, "limit too high", run_id="r2"
        )
    assert second.repeated and second.run_id == "r2"
    assert memory.error_counts() == {"invalid_arguments": 2}
    # the earlier lesson was shown to the model when reflecting on the second failure
    assert "Lessons from earlier failures" in model.calls[1].messages[-1].content
    assert GOOD["suggested_fix"] in format_reflections(memory.relevant(retry))


async def test_reflect_in_run_emits_the_frame_and_a_resumed_step_does_not_duplicate() -> None:
    store = MemoryStore()
    memory = EpisodicMemory(store, agent_type="react", user_id="ana")
    committed: list[Frame] = []
    model = ScriptedModel([GOOD])
    ctx = step_context(model, committed)
    record = await reflect_in_run(ctx, memory, SEARCH, "limit too high", goal="compare")
    frames = committed + ctx.take_pending()
    assert [type(f) for f in frames] == [ModelCall, UsageFrame, Reflection]
    assert isinstance(frames[0], ModelCall) and frames[0].purpose == "reflexion.reflect"
    frame = frames[2]
    assert isinstance(frame, Reflection)
    assert (frame.reflection_id, frame.run_id, frame.error_type) == (
        record.id,
        "run-1",
        "invalid_arguments",
    )
    assert record.run_id == "run-1" and record.created_at == frame.created_at
    model.assert_consumed()

    # The step is re-executed after a crash: the model is not called again, nothing is duplicated.
    ctx.begin_step(1, journal=frames)
    again = await reflect_in_run(ctx, memory, SEARCH, "limit too high", goal="compare")
    assert again == record
    assert ctx.take_pending() == []
    assert memory.reflections() == [record]


async def test_alternative_action_is_a_different_call() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react")
    alternative = {
        "name": "fetch_page",
        "arguments": {"url": "https://x.org"},
        "reasoning": "direct",
    }
    with ScriptedModel([alternative]) as model:
        found = await suggest_alternative(
            model.complete, SEARCH, "limit too high", memory=memory, tools=TOOLS, goal="compare"
        )
    assert found is not None
    assert found.call == ToolCall("fetch_page", {"url": "https://x.org"})
    assert found.reasoning == "direct"
    schema = model.calls[0].output_schema
    assert schema is not None and schema["properties"]["name"]["enum"] == ["search", "fetch_page"]
    assert '"name": "search"' in model.calls[0].messages[-1].content


async def test_alternative_never_repeats_a_failed_call() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react")
    earlier = ToolCall("fetch_page", {"url": "https://x.org"})
    with ScriptedModel([GOOD]) as model:
        await reflect_on_failure(model.complete, memory, earlier, "404")
    replies: list[Any] = [
        {"name": "search", "arguments": dict(SEARCH.arguments), "reasoning": "again"},
        {"name": "fetch_page", "arguments": {"url": "https://x.org"}, "reasoning": "again"},
        ModelResponse(parsed={"name": "delete_all", "arguments": {}, "reasoning": ""}),
        ModelResponse(parsed={"name": "search", "arguments": "limit=3", "reasoning": ""}),
        ModelResponse(text="try something else"),
    ]
    with ScriptedModel(replies) as model:
        for _ in replies:
            found = await suggest_alternative(
                model.complete, SEARCH, "limit too high", memory=memory, tools=TOOLS
            )
            assert found is None
    # without a tool list any tool name is accepted, but still never a failed call
    with ScriptedModel(
        [
            {
                "name": "search",
                "arguments": {"query": "solar", "limit": 3},
                "reasoning": "smaller limit",
            }
        ]
    ) as model:
        found = await suggest_alternative(model.complete, SEARCH, "limit too high")
    assert found is not None and found.call.arguments == {"query": "solar", "limit": 3}


# -- a failed action's reflection is found again ---------------------------------------------

names = st.sampled_from(["search", "fetch_page", "calculator", "read_file"])
scalars = st.one_of(st.integers(-5, 5), st.text(max_size=12), st.booleans(), st.none())
arguments = st.dictionaries(st.sampled_from(["query", "limit", "url", "path"]), scalars, max_size=3)
actions = st.builds(ToolCall, names, arguments)
OLD = datetime(2020, 1, 1, tzinfo=UTC)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    failed=actions,
    retry_arguments=arguments,
    error=st.text(max_size=80),
    others=st.lists(actions, max_size=4),
    usable=st.booleans(),
)
async def test_property_reflection_is_stored_and_retrievable_for_retries(
    failed: ToolCall,
    retry_arguments: dict[str, Any],
    error: str,
    others: list[ToolCall],
    usable: bool,
) -> None:
    """For any failed action, its reflection is stored and retrieved (first, for an
    identical retry) when the same tool is tried again with any arguments, also from a reopened
    database, and never for a different tool or another user."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kforge.db"
        store = SQLiteStore(path)
        memory = EpisodicMemory(store, agent_type="react", user_id="u")
        for n, other in enumerate(others):
            memory.save(
                ReflectionRecord(
                    id=f"old{n}",
                    error_type="tool_error",
                    failed_action=other,
                    error="e",
                    analysis="a",
                    suggested_fix="f",
                    created_at=OLD,
                )
            )
        reply = GOOD if usable else ModelResponse(text="not json")
        with ScriptedModel([reply]) as model:
            stored = await reflect_on_failure(model.complete, memory, failed, error)
        store.close()

        reopened = SQLiteStore(path)
        try:
            memory = EpisodicMemory(reopened, agent_type="react", user_id="u")
            retry = ToolCall(failed.name, retry_arguments)
            assert memory.relevant(failed, limit=1) == [stored], "newest lesson first"
            assert stored in memory.relevant(retry, limit=len(others) + 1)
            elsewhere = ToolCall("not_" + failed.name, retry_arguments)
            assert stored not in memory.relevant(elsewhere, limit=100)
            assert EpisodicMemory(reopened, agent_type="react", user_id="v").reflections() == []
        finally:
            reopened.close()
