"""Token accounting: estimates before a call, prices, and the budget every run is held to.

``RunBudget`` is the one budget: the runner builds it from the run's ``RunLimits`` (per run and
per session tokens, cost) and the configured prices, and ``RunContext`` checks it before each
model call (the hard stop that pauses the run) and after (the warning frame at the threshold).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kforge.errors import ConfigurationError, LimitExceededError
from kforge.llm.estimate import estimate_messages_tokens, estimate_text_tokens
from kforge.llm.types import Message, Usage

__all__ = [
    "BudgetState",
    "Price",
    "PriceTable",
    "RunBudget",
    "TokenBudget",
    "TokenCounter",
    "TokenEstimate",
    "estimate_tokens",
    "format_usage",
]


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts tokens exactly, e.g. a ``LocalModel`` with its own tokenizer."""

    def count_tokens(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1e6


_FREE = Price(0.0, 0.0)


class PriceTable:
    """Prices by model name; ``provider:*`` entries cover every model of a provider.

    Local models cost nothing unless the table says otherwise; unknown models have no price.
    """

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices = dict(prices or {})
        self._resolved: dict[str, Price | None] = {}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Mapping[str, float]]) -> PriceTable:
        """From the config file's ``[prices]``: ``{"openai:gpt-4o-mini": {"input": .15, "output": .6}}``."""
        prices = {}
        for model, entry in data.items():
            try:
                prices[model] = Price(float(entry["input"]), float(entry["output"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigurationError(
                    f"[prices] entry '{model}' needs numeric 'input' and 'output' (USD per "
                    "million tokens), e.g. { input = 0.15, output = 0.6 }"
                ) from exc
        return cls(prices)

    def lookup(self, model: str) -> Price | None:
        try:
            return self._resolved[model]  # once per model: every model call asks
        except KeyError:
            pass
        price = self._prices.get(model)
        if price is None:
            provider = model.split(":", 1)[0]
            price = self._prices.get(f"{provider}:*")
            if price is None and provider in ("local", "test", "function"):
                price = _FREE
        self._resolved[model] = price
        return price

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.lookup(model)
        return None if price is None else price.cost(usage.input_tokens, usage.output_tokens)


@dataclass(frozen=True, slots=True)
class TokenEstimate:
    input: int
    output: int
    cost: float | None = None
    exact: bool = False
    """True when the input was counted with the model's own tokenizer."""

    @property
    def total(self) -> int:
        return self.input + self.output


def estimate_tokens(
    prompt: str | Sequence[Message],
    expected_output_tokens: int,
    *,
    counter: object | None = None,
    price: Price | None = None,
) -> TokenEstimate:
    """Tokens a call will use: the prompt counted by ``counter`` when it can count (a local
    model's own tokenizer), else the documented estimate of ``kforge.llm.estimate``."""
    exact = isinstance(counter, TokenCounter)
    if isinstance(prompt, str):
        count = (
            counter.count_tokens(prompt)
            if isinstance(counter, TokenCounter)
            else estimate_text_tokens(prompt)
        )
    elif callable(count_prompt := getattr(counter, "count_prompt_tokens", None)):
        count = int(count_prompt(prompt))
    elif isinstance(counter, TokenCounter):
        count = sum(counter.count_tokens(m.content) + 4 for m in prompt) + 2
    else:
        count = estimate_messages_tokens(prompt)
    output = max(0, expected_output_tokens)
    cost = price.cost(count, output) if price is not None else None
    return TokenEstimate(count, output, cost, exact)


class BudgetState(enum.Enum):
    OK = "ok"
    WARNING = "warning"
    EXCEEDED = "exceeded"


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """One limit (tokens, or dollars) with the fraction of it at which a warning is due."""

    limit: float | None = None
    """Tokens (input plus output) or dollars allowed in total; None means unlimited."""
    warning_threshold: float = 0.8
    """Fraction of the limit at which a warning is due."""

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit <= 0:
            raise ConfigurationError(f"a token or cost limit must be positive, got {self.limit}")
        if not 0.0 < self.warning_threshold <= 1.0:
            raise ConfigurationError(
                f"warning threshold is a fraction in (0, 1], got {self.warning_threshold}"
            )

    def state(self, used: float) -> BudgetState:
        if self.limit is None:
            return BudgetState.OK
        if used >= self.limit:
            return BudgetState.EXCEEDED
        if used >= self.warning_threshold * self.limit:
            return BudgetState.WARNING
        return BudgetState.OK


def format_usage(usage: Usage, *, cost: float | None = None, budget: int | None = None) -> str:
    """E.g. ``1,234 in + 567 out = 1,801 tokens · 45% of 4,000 budget · $0.0012``."""
    parts = [
        f"{usage.input_tokens:,} in + {usage.output_tokens:,} out = {usage.total_tokens:,} tokens"
    ]
    if budget is not None:
        share = 100.0 * usage.total_tokens / budget
        parts.append(f"{share:.0f}% of {budget:,} budget")
        state = TokenBudget(budget).state(usage.total_tokens)
        if state is BudgetState.EXCEEDED:
            parts.append("budget exhausted")
        elif state is BudgetState.WARNING:
            parts.append("nearing budget")
    if cost is not None:
        parts.append(f"${cost:.4f}")
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class RunBudget:
    """A run's token and cost limits, held against what the run and its session used."""

    max_tokens: int | None = None
    max_session_tokens: int | None = None
    max_cost_usd: float | None = None
    warning_threshold: float = 0.8
    session_tokens: int = 0
    """Tokens the session's other runs had used when this stretch of the run began."""
    prices: PriceTable = field(default_factory=PriceTable)

    def __post_init__(self) -> None:
        for limit in (self.max_tokens, self.max_session_tokens, self.max_cost_usd):
            TokenBudget(limit, self.warning_threshold)  # checks both

    def _used(self, usage: Usage, cost: float | None) -> list[tuple[str, float, TokenBudget]]:
        if (
            self.max_tokens is None
            and self.max_session_tokens is None
            and self.max_cost_usd is None
        ):
            return []  # every model call asks: no limits, nothing to measure
        measures = [
            ("max_tokens", usage.total_tokens, self.max_tokens),
            (
                "max_session_tokens",
                self.session_tokens + usage.total_tokens,
                self.max_session_tokens,
            ),
            ("max_cost_usd", cost or 0.0, self.max_cost_usd),
        ]
        return [
            (name, used, TokenBudget(limit, self.warning_threshold))
            for name, used, limit in measures
            if limit is not None
        ]

    def check(self, usage: Usage, cost: float | None) -> None:
        """The hard stop before a model call: ``LimitExceededError`` once a limit is used up."""
        for name, used, budget in self._used(usage, cost):
            if budget.state(used) is BudgetState.EXCEEDED:
                assert budget.limit is not None
                raise LimitExceededError(name, used, budget.limit)

    def crossed(
        self, before: Usage, cost_before: float | None, after: Usage, cost_after: float | None
    ) -> list[tuple[str, float, float]]:
        """The limits whose warning threshold the last call crossed: (name, used, limit)."""
        was = {name: budget.state(used) for name, used, budget in self._used(before, cost_before)}
        return [
            (name, used, budget.limit)
            for name, used, budget in self._used(after, cost_after)
            if budget.limit is not None
            and was[name] is BudgetState.OK
            and budget.state(used) is not BudgetState.OK
        ]

    def cost(self, model: str, usage: Usage) -> float | None:
        """What a call of ``model`` cost; None without a price, which a cost limit refuses."""
        price = self.prices.lookup(model)
        if price is None:
            if self.max_cost_usd is not None:
                raise ConfigurationError(
                    f"no price for '{model}', so max_cost_usd cannot be enforced; add it to the "
                    f'config file\'s [prices], e.g. "{model}" = {{ input = 0.15, output = 0.6 }} '
                    "(USD per million tokens)"
                )
            return None
        return price.cost(usage.input_tokens, usage.output_tokens)
