"""Token accounting: estimates, prices, and the run budget (hard stop and warning threshold)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.errors import ConfigurationError, LimitExceededError
from kforge.llm.types import Message, Usage
from kforge.memory.tokens import (
    BudgetState,
    Price,
    PriceTable,
    RunBudget,
    TokenBudget,
    estimate_tokens,
    format_usage,
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


def test_budget_states_and_thresholds() -> None:
    budget = TokenBudget(1000, warning_threshold=0.8)
    assert budget.state(700) is BudgetState.OK
    assert budget.state(800) is BudgetState.WARNING
    assert budget.state(1000) is BudgetState.EXCEEDED
    assert TokenBudget().state(10**9) is BudgetState.OK


def test_budget_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="must be positive"):
        TokenBudget(0)
    with pytest.raises(ConfigurationError, match="fraction"):
        TokenBudget(100, warning_threshold=1.5)


def test_format_usage() -> None:
    assert (
        format_usage(Usage(1234, 567), cost=0.00123, budget=4000)
        == "1,234 in + 567 out = 1,801 tokens · 45% of 4,000 budget · $0.0012"
    )
    assert format_usage(Usage(10, 5)) == "10 in + 5 out = 15 tokens"
    assert format_usage(Usage(900, 0), budget=1000).endswith("nearing budget")
    assert format_usage(Usage(900, 200), budget=1000).endswith("budget exhausted")


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
    with pytest.raises(ConfigurationError, match=r"\[prices\] entry 'x'"):
        PriceTable.from_mapping({"x": {"input": 1}})


def test_run_budget_counts_the_session_and_prices_calls() -> None:
    budget = RunBudget(
        max_tokens=1000,
        max_session_tokens=1500,
        warning_threshold=0.5,
        session_tokens=600,
        prices=PriceTable({"openai:m": Price(1.0, 1.0)}),
    )
    assert budget.cost("openai:m", Usage(300, 100)) == pytest.approx(400 / 1e6)
    assert budget.cost("openrouter:x", Usage(1, 1)) is None
    assert budget.crossed(Usage(100, 0), None, Usage(400, 0), None) == [
        ("max_session_tokens", 1000, 1500)
    ]
    budget.check(Usage(899, 0), None)
    with pytest.raises(LimitExceededError, match="limit 'max_session_tokens' reached: 1500"):
        budget.check(Usage(900, 0), None)
    with pytest.raises(ConfigurationError, match="must be positive"):
        RunBudget(max_cost_usd=0)


calls_strategy = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), max_size=20)


@settings(max_examples=300, deadline=None)
@given(calls_strategy, st.integers(1, 3000), st.sampled_from([0.5, 0.8, 1.0]))
def test_token_budget_enforcement(
    calls: list[tuple[int, int]], limit: int, threshold: float
) -> None:
    """For any run, no model call starts once the run has used its budget, and the warning
    comes exactly once when usage reaches the threshold."""
    budget = RunBudget(max_tokens=limit, warning_threshold=threshold)
    used = Usage(0, 0, 0)
    warnings: list[tuple[str, float, float]] = []
    for inp, out in calls:
        try:
            budget.check(used, None)
        except LimitExceededError:
            assert used.total_tokens >= limit
            break
        assert used.total_tokens < limit  # a call starts only with budget left
        after = used + Usage(inp, out)
        warnings += budget.crossed(used, None, after, None)
        used = after
    reached = used.total_tokens >= threshold * limit
    assert len(warnings) == (1 if reached else 0)
