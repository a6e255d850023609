"""Compaction: at least 20 % fewer tokens, grounding never dropped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kforge.engine.run_context import RunContext
from kforge.errors import ModelUnavailableError, ScriptedModelError
from kforge.frames import Compaction, Frame, ModelCall, Observation, UsageFrame
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec
from kforge.memory.compaction import (
    CompactionError,
    compact_context,
    compact_if_needed,
    compact_in_run,
    compaction_step,
)
from kforge.memory.window import ContextWindow, EntryKind, GroundingSection, approximate_tokens
from tests.step_context import step_context


def filled_window(entries: int = 8, size: int = 400, max_tokens: int = 1000) -> ContextWindow:
    window = ContextWindow.create("answer the user's question about solar panels", max_tokens)
    window.record_decision("use the 2024 datasheet")
    window.set_preference("units", "metric")
    for i in range(entries):
        kind: EntryKind = "user" if i % 2 == 0 else "tool"
        window.add(
            kind, f"entry {i}. " + "word " * (size // 5), name="search" if kind == "tool" else None
        )
    return window


def check_guarantees(window: ContextWindow, compacted: ContextWindow, before: int) -> None:
    assert compacted.token_count * 5 <= before * 4, "less than 20 % removed"
    assert compacted.grounding == window.grounding
    assert compacted.serialize().startswith(window.grounding.render())


async def test_model_summary_replaces_older_entries_and_recent_ones_are_kept() -> None:
    window = filled_window()
    before = window.token_count
    with ScriptedModel(["Searched twice for panel efficiency; found 21 % for model X."]) as model:
        result = await compact_context(window, model.complete, keep_recent=2)
    assert result.method == "model"
    assert result.summary == "Searched twice for panel efficiency; found 21 % for model X."
    assert result.entries_compacted == 6
    history = result.context.history
    assert history[0].kind == "summary" and history[0].compacted
    assert history[0].content == result.summary
    assert history[1:] == window.history[-2:]
    assert result.tokens_before == before
    assert result.tokens_after == result.context.token_count
    check_guarantees(window, result.context, before)
    assert window.token_count == before, "the input context must not change"
    call = model.calls[0]
    prompt = call.messages[1].content
    assert window.grounding.render() in prompt
    assert "[user] entry 0." in prompt and "entry 5." in prompt and "entry 6." not in prompt
    assert call.settings is not None and call.settings.max_tokens is not None
    assert approximate_tokens(result.summary) <= call.settings.max_tokens


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   \n",
        "far too long " * 2000,
        ModelResponse(text="", finish_reason="length"),
    ],
    ids=["empty", "blank", "too-long", "truncated"],
)
async def test_unusable_model_summary_falls_back_to_an_extractive_summary(reply: Any) -> None:
    window = filled_window()
    before = window.token_count
    with ScriptedModel([reply]) as model:
        result = await compact_context(window, model.complete)
    assert result.method == "extractive"
    assert "- [user] entry 0." in result.summary
    assert "- [tool:search] entry 1." in result.summary
    check_guarantees(window, result.context, before)


async def test_a_failing_model_falls_back_and_a_misscripted_model_fails_loudly() -> None:
    async def unavailable(
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        raise ModelUnavailableError("server unreachable")

    window = filled_window()
    result = await compact_context(window, unavailable)
    assert result.method == "extractive"
    check_guarantees(window, result.context, window.token_count)
    with pytest.raises(ScriptedModelError, match="queue is empty"):
        await compact_context(window, ScriptedModel().complete)


async def test_without_a_model_the_extractive_summary_is_used() -> None:
    window = filled_window()
    result = await compact_context(window, None)
    assert result.method == "extractive"
    check_guarantees(window, result.context, window.token_count)
    again = await compact_context(window, None)
    assert again.context == result.context, "the fallback must be deterministic"


async def test_when_no_summary_fits_the_older_entries_are_dropped() -> None:
    window = ContextWindow.create("g", 100, count_tokens=len)
    window.add("user", "x" * 10)
    before = window.token_count
    result = await compact_context(window, None)
    assert result.method == "dropped"
    assert result.context.history == []
    assert result.entries_compacted == 1
    check_guarantees(window, result.context, before)


async def test_compaction_refuses_to_drop_the_grounding() -> None:
    window = ContextWindow.create("a long goal " * 50, 10_000)
    window.add("user", "hi")
    with pytest.raises(CompactionError, match="grounding section alone takes"):
        await compact_context(window, None)
    with pytest.raises(CompactionError, match="history is empty"):
        await compact_context(ContextWindow.create("g", 100), None)


async def test_compaction_fits_within_a_target_below_the_eighty_percent_bound() -> None:
    window = filled_window(entries=8, size=400, max_tokens=900)
    target = window.token_count // 2
    result = await compact_context(window, None, fit_within=target, max_summary_tokens=40)
    check_guarantees(window, result.context, window.token_count)
    assert result.tokens_after <= target
    assert window.count_tokens(result.summary) <= 40


async def test_compact_if_needed_waits_for_eighty_percent() -> None:
    window = filled_window(entries=2, size=100, max_tokens=10_000)
    assert await compact_if_needed(window, None) is None
    crowded = filled_window(entries=8, size=400, max_tokens=900)
    assert crowded.needs_compaction()
    result = await compact_if_needed(crowded, None)
    assert result is not None
    assert not result.context.needs_compaction()


async def test_compact_in_run_journals_the_model_call_and_emits_the_frame() -> None:
    committed: list[Frame] = []
    model = ScriptedModel(["Short summary."])
    ctx = step_context(model, committed, agent_type="test")
    window = filled_window()
    result = await compact_in_run(ctx, window)
    frames = committed + ctx.take_pending()
    assert [type(f) for f in frames] == [ModelCall, UsageFrame, Compaction]
    model_call, compaction = frames[0], frames[2]
    assert isinstance(model_call, ModelCall) and model_call.purpose == "context.compaction"
    assert isinstance(compaction, Compaction)
    assert compaction.run_id == "run-1" and compaction.seq == 3
    assert compaction.tokens_before == result.tokens_before
    assert compaction.tokens_after == result.tokens_after
    assert compaction.entries_compacted == result.entries_compacted
    assert compaction.summary == "Short summary."
    model.assert_consumed()


async def compact_as_a_step(ctx: RunContext, window: ContextWindow) -> ContextWindow | None:
    async def compact(started: Frame | None) -> ContextWindow:
        return (await compact_in_run(ctx, window)).context

    effect, start = compaction_step(window)
    return await ctx.step(effect, compact, start)


async def test_a_compaction_step_replays_where_the_first_execution_compacted() -> None:
    committed: list[Frame] = []
    first = step_context(ScriptedModel(["Short summary."]), committed)
    assert await compact_as_a_step(first, filled_window(entries=1)) is None  # not due: no frame
    first.emit(Observation(content="looked", goal_achieved=False, iteration=1))
    assert await compact_as_a_step(first, filled_window()) is not None
    journal = committed + first.take_pending()
    assert [f.type for f in journal] == [
        "agent.observation",
        "data.context.compaction.started",
        "model.call",
        "usage",
        "context.compaction",
    ]
    # re-executed where the context is due before the recorded compaction (memory grew in
    # between) and not due where it compacted: the log decides, and no model is asked
    model = ScriptedModel([])
    again = step_context(model, [], journal=journal)
    assert await compact_as_a_step(again, filled_window()) is None
    again.emit(Observation(content="looked", goal_achieved=False, iteration=1))
    assert await compact_as_a_step(again, filled_window(entries=1)) is not None
    assert again.take_pending() == []
    model.assert_consumed()


async def test_a_compaction_recorded_before_its_start_was_still_replays() -> None:
    committed: list[Frame] = []
    first = step_context(ScriptedModel(["Short summary."]), committed)
    await compact_in_run(first, filled_window())  # what an earlier version recorded
    journal = committed + first.take_pending()
    assert journal[0].type == "model.call"
    again = step_context(ScriptedModel([]), [], journal=journal)
    assert await compact_as_a_step(again, filled_window(entries=1)) is not None
    assert again.take_pending() == []


# -- properties ----------------------------------------------------------------------------------

counters: st.SearchStrategy[Callable[[str], int]] = st.sampled_from(
    [approximate_tokens, len, lambda t: len(t.split()), lambda t: 3 + len(t) // 7]
)
words = st.text(alphabet="abcdefgh .,\n", max_size=300)
groundings = st.builds(
    GroundingSection,
    current_goal=st.text(max_size=80),
    completed_subtasks=st.lists(st.text(max_size=30), max_size=3).map(tuple),
    key_decisions=st.lists(st.text(max_size=30), max_size=3).map(tuple),
    user_preferences=st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=3).map(
        lambda d: tuple(d.items())
    ),
)
replies = st.one_of(
    st.text(max_size=40),
    st.text(min_size=200, max_size=2000),
    st.just(ModelResponse(text="")),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    grounding=groundings,
    contents=st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "tool", "observation"]), words),
        min_size=1,
        max_size=12,
    ),
    count=counters,
    reply=replies,
    keep_recent=st.integers(0, 4),
    use_model=st.booleans(),
)
async def test_property_compaction_cuts_twenty_percent_and_keeps_the_grounding(
    grounding: GroundingSection,
    contents: list[tuple[Any, str]],
    count: Callable[[str], int],
    reply: Any,
    keep_recent: int,
    use_model: bool,
) -> None:
    """For any context, compaction either removes at least 20 % of the
    tokens and keeps the grounding section unchanged and first, or refuses because the
    grounding alone is over 80 % (or there is no history)."""
    window = ContextWindow(grounding, max_tokens=1000, count_tokens=count)
    for kind, text in contents:
        window.add(kind, text)
    before = window.token_count
    model = ScriptedModel([reply])
    feasible = window.grounding_tokens * 5 <= before * 4 and before > 0
    if not feasible:
        with pytest.raises(CompactionError):
            await compact_context(window, model.complete if use_model else None)
        return
    result = await compact_context(
        window, model.complete if use_model else None, keep_recent=keep_recent
    )
    check_guarantees(window, result.context, before)
    assert result.tokens_after == result.context.token_count
    assert result.context.grounding.render() == grounding.render()
    kept = result.context.history[1:] if result.summary else result.context.history
    assert kept == window.history[len(window.history) - len(kept) :], "kept entries are verbatim"
    assert result.entries_compacted + len(kept) == len(window.history)
