"""Token accounting: estimates, tracking per call/run/session, budgets, cost, and the best result when the budget runs out."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.errors import ConfigurationError, LimitExceededError
from kforge.llm.types import Message, Usage
from kforge.memory.tokens import (
    BudgetedStep,
    BudgetState,
    Price,
    PriceTable,
    TokenBudget,
    TokenTracker,
    TokenUsage,
    estimate_tokens,
    format_usage,
    is_budget_exceeded,
    is_warning_threshold,
    run_within_budget,
    track_usage,
)


def test_estimate_without_a_tokenizer_uses_the_documented_rule() -> None:
    estimate = estimate_tokens("abcd" * 10, 50)
    assert (estimate.input, estimate.output, estimate.total, estimate.exact) == (10, 50, 60, False)
    assert estimate_tokens("日本語", 0).input == 3  # non-ASCII: one token per character
    chat = estimate_tokens([Message.system("abcd"), Message.user("abcdabcd")], 10)
    assert chat.input == (4 + 1) + (4 + 2) + 2


def test_estimate_uses_a_counter_when_there_is_one() -> None:
    @dataclass
    class Words:
        def count_tokens(self, text: str) -> int:
            return len(text.split())

    estimate = estimate_tokens("one two three", 5, counter=Words(), price=Price(1.0, 2.0))
    assert estimate.input == 3 and estimate.exact
    assert estimate.cost == pytest.approx((3 * 1.0 + 5 * 2.0) / 1e6)


def test_estimate_with_the_local_models_own_tokenizer() -> None:
    from kforge.llm.local import LocalModel

    model = LocalModel()
    text = "Knowledge Forge estimates tokens before every call."
    assert estimate_tokens(text, 0, counter=model).input == model.count_tokens(text)
    messages = [Message.user(text)]
    assert estimate_tokens(messages, 0, counter=model).input == model.count_prompt_tokens(messages)


def test_track_usage_and_thresholds() -> None:
    usage = TokenUsage(budget=1000, warning_threshold=0.8)
    usage = track_usage(usage, Usage(500, 200))
    assert usage.session_total == Usage(500, 200, 1) and usage.current_operation == Usage(
        500, 200, 1
    )
    assert not is_warning_threshold(usage) and not is_budget_exceeded(usage)
    usage = track_usage(usage, Usage(80, 20))
    assert is_warning_threshold(usage) and not is_budget_exceeded(usage)
    usage = track_usage(usage, Usage(150, 50))
    assert is_warning_threshold(usage) and is_budget_exceeded(usage)
    unlimited = track_usage(TokenUsage(), Usage(10**9, 0))
    assert not is_budget_exceeded(unlimited) and not is_warning_threshold(unlimited)


def test_budget_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="must be positive"):
        TokenBudget(0)
    with pytest.raises(ConfigurationError, match="fraction"):
        TokenBudget(100, warning_threshold=1.5)


def test_format_usage() -> None:
    usage = TokenUsage(Usage(1234, 567), Usage(0, 0, 0), budget=4000)
    assert (
        format_usage(usage, cost=0.00123)
        == "1,234 in + 567 out = 1,801 tokens · 45% of 4,000 budget · $0.0012"
    )
    assert format_usage(Usage(10, 5)) == "10 in + 5 out = 15 tokens"
    assert format_usage(TokenUsage(Usage(900, 0), budget=1000)).endswith("nearing budget")
    assert format_usage(TokenUsage(Usage(900, 200), budget=1000)).endswith("budget exhausted")


def test_prices() -> None:
    table = PriceTable.from_mapping(
        {
            "openai:gpt-4o-mini": {"input": 0.15, "output": 0.6},
            "ollama:*": {"input": 0, "output": 0},
        }
    )
    assert table.cost("openai:gpt-4o-mini", Usage(1_000_000, 1_000_000)) == pytest.approx(0.75)
    assert table.cost("ollama:llama3.2", Usage(5, 5)) == 0
    assert table.cost("local:smollm2", Usage(5, 5)) == 0
    assert table.cost("openrouter:some/model", Usage(5, 5)) is None
    with pytest.raises(ConfigurationError, match="price of 'x'"):
        PriceTable.from_mapping({"x": {"input": 1}})


def test_tracker_counts_per_call_run_and_session_and_stops_hard() -> None:
    tracker = TokenTracker(TokenBudget(1000, 0.5), prices=PriceTable({"openai:m": Price(1.0, 1.0)}))
    assert tracker.record(Usage(300, 100), model="openai:m", run_id="r1") is BudgetState.OK
    assert tracker.record(Usage(100, 50), model="local:smollm2", run_id="r2") is BudgetState.WARNING
    assert tracker.run("r1") == Usage(300, 100, 1) and tracker.run("r2") == Usage(100, 50, 1)
    assert tracker.session == Usage(400, 150, 2) and tracker.remaining == 450
    assert tracker.cost == pytest.approx(400 / 1e6)
    assert tracker.can_afford(450) and not tracker.can_afford(451)
    with pytest.raises(LimitExceededError, match="limit 'tokens' reached: 1001 of 1000"):
        tracker.check(451)
    tracker.begin_operation()
    tracker.record(Usage(400, 50))
    assert tracker.state is BudgetState.EXCEEDED
    assert tracker.snapshot().current_operation == Usage(400, 50, 1)
    assert "budget exhausted" in tracker.format()


steps_strategy = st.lists(
    st.tuples(st.integers(0, 400), st.integers(0, 400), st.none() | st.floats(0, 1), st.booleans()),
    min_size=1,
    max_size=15,
)


@settings(max_examples=300, deadline=None)
@given(steps_strategy, st.integers(1, 3000), st.integers(1, 20), st.integers(0, 300))
async def test_token_budget_enforcement(
    plan: list[tuple[int, int, float | None, bool]], budget: int, max_steps: int, reserve: int
) -> None:
    """For any execution whose token usage exceeds the budget, the run stops and returns the
    best result it has."""
    tracker = TokenTracker(TokenBudget(budget))
    started: list[int] = []
    used_before: list[int] = []

    async def step(index: int) -> BudgetedStep[int]:
        started.append(index)
        used_before.append(tracker.used)
        inp, out, score, done = plan[index % len(plan)]
        return BudgetedStep(result=index, usage=Usage(inp, out), done=done, score=score)

    outcome = await run_within_budget(
        step, tracker, max_steps=max_steps, estimate=lambda i: reserve
    )
    # Every step started while the budget still had room for it...
    assert all(budget - before >= reserve and before < budget for before in used_before)
    # ...no step ran after usage reached the budget, and the run stopped for a stated reason.
    assert outcome.steps == len(started) <= max_steps
    if outcome.stopped_by == "budget":
        assert tracker.state is BudgetState.EXCEEDED or not tracker.can_afford(reserve)
    elif outcome.stopped_by == "max_steps":
        assert outcome.steps == max_steps
    else:
        assert plan[(outcome.steps - 1) % len(plan)][3]
    # The result is the best available one.
    if not started:
        assert outcome.result is None
    elif outcome.stopped_by == "done":
        assert outcome.result == started[-1]
    else:
        scores = [plan[i % len(plan)][2] for i in started]
        if all(s is not None for s in scores):
            best = max(range(len(started)), key=lambda i: (scores[i], i))
            assert outcome.result == started[best]
        else:
            assert outcome.result is not None
    assert outcome.usage.total_tokens == tracker.used
    if tracker.state is not BudgetState.OK:
        assert outcome.warned


async def test_budget_exceeded_mid_run_returns_the_best_partial_result() -> None:
    tracker = TokenTracker(TokenBudget(250))
    scores = [0.2, 0.9, 0.4, 0.95]

    async def step(i: int) -> BudgetedStep[str]:
        return BudgetedStep(f"draft {i}", Usage(60, 40), score=scores[i])

    outcome = await run_within_budget(step, tracker, max_steps=4)
    assert outcome.stopped_by == "budget" and outcome.steps == 3
    assert outcome.result == "draft 1"
    assert outcome.warned and tracker.used == 300
