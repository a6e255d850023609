"""Token accounting: estimates before a call, usage per call, run and session,
a budget with a warning threshold and a hard stop, optional cost, and a display format."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from kforge.errors import ConfigurationError, LimitExceededError
from kforge.llm.estimate import estimate_messages_tokens, estimate_text_tokens
from kforge.llm.types import Message, Usage

__all__ = [
    "BudgetState",
    "BudgetedOutcome",
    "BudgetedStep",
    "CallRecord",
    "Price",
    "PriceTable",
    "TokenBudget",
    "TokenCounter",
    "TokenEstimate",
    "TokenTracker",
    "TokenUsage",
    "estimate_tokens",
    "format_usage",
    "is_budget_exceeded",
    "is_warning_threshold",
    "run_within_budget",
    "track_usage",
]

T = TypeVar("T")


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


class PriceTable:
    """Prices by model name; ``provider:*`` entries cover every model of a provider.

    Local models cost nothing unless the table says otherwise; unknown models have no price.
    """

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices = dict(prices or {})

    @classmethod
    def from_mapping(cls, data: Mapping[str, Mapping[str, float]]) -> PriceTable:
        """From the config file's ``[prices]``: ``{"openai:gpt-4o-mini": {"input": .15, "output": .6}}``."""
        prices = {}
        for model, entry in data.items():
            try:
                prices[model] = Price(float(entry["input"]), float(entry["output"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigurationError(
                    f"price of '{model}' needs numeric 'input' and 'output' (USD per million tokens)"
                ) from exc
        return cls(prices)

    def lookup(self, model: str) -> Price | None:
        if model in self._prices:
            return self._prices[model]
        provider = model.split(":", 1)[0]
        if f"{provider}:*" in self._prices:
            return self._prices[f"{provider}:*"]
        if provider in ("local", "test", "function"):
            return Price(0.0, 0.0)
        return None

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
    limit: int | None = None
    """Tokens (input plus output) allowed in total; None means unlimited."""
    warning_threshold: float = 0.8
    """Fraction of the limit at which a warning is due."""

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit <= 0:
            raise ConfigurationError(f"token budget must be positive, got {self.limit}")
        if not 0.0 < self.warning_threshold <= 1.0:
            raise ConfigurationError(
                f"warning threshold is a fraction in (0, 1], got {self.warning_threshold}"
            )

    def state(self, used: int) -> BudgetState:
        if self.limit is None:
            return BudgetState.OK
        if used >= self.limit:
            return BudgetState.EXCEEDED
        if used >= self.warning_threshold * self.limit:
            return BudgetState.WARNING
        return BudgetState.OK


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Usage as shown to a user: session total, the current operation, and the budget."""

    session_total: Usage = field(default_factory=lambda: Usage(0, 0, 0))
    current_operation: Usage = field(default_factory=lambda: Usage(0, 0, 0))
    budget: int | None = None
    warning_threshold: float = 0.8


def track_usage(usage: TokenUsage, actual: Usage) -> TokenUsage:
    """``usage`` with ``actual`` added to the session and to the current operation."""
    return TokenUsage(
        usage.session_total + actual,
        usage.current_operation + actual,
        usage.budget,
        usage.warning_threshold,
    )


def is_budget_exceeded(usage: TokenUsage) -> bool:
    """True once the session has used the whole budget (nothing is left for another call)."""
    state = TokenBudget(usage.budget, usage.warning_threshold).state(
        usage.session_total.total_tokens
    )
    return state is BudgetState.EXCEEDED


def is_warning_threshold(usage: TokenUsage) -> bool:
    """True once the warning threshold of the budget is reached (and stays true past it)."""
    state = TokenBudget(usage.budget, usage.warning_threshold).state(
        usage.session_total.total_tokens
    )
    return state is not BudgetState.OK


def format_usage(
    usage: TokenUsage | Usage, *, cost: float | None = None, budget: int | None = None
) -> str:
    """E.g. ``1,234 in + 567 out = 1,801 tokens · 45% of 4,000 budget · $0.0012``."""
    if isinstance(usage, TokenUsage):
        budget = usage.budget if budget is None else budget
        total = usage.session_total
        threshold = usage.warning_threshold
    else:
        total, threshold = usage, 0.8
    parts = [
        f"{total.input_tokens:,} in + {total.output_tokens:,} out = {total.total_tokens:,} tokens"
    ]
    if budget is not None:
        share = 100.0 * total.total_tokens / budget
        parts.append(f"{share:.0f}% of {budget:,} budget")
        state = TokenBudget(budget, threshold).state(total.total_tokens)
        if state is BudgetState.EXCEEDED:
            parts.append("budget exhausted")
        elif state is BudgetState.WARNING:
            parts.append("nearing budget")
    if cost is not None:
        parts.append(f"${cost:.4f}")
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class CallRecord:
    model: str
    usage: Usage
    run_id: str | None = None
    purpose: str = ""
    cost: float | None = None


class TokenTracker:
    """Usage per call, per run and per session, held against a budget."""

    def __init__(
        self, budget: TokenBudget | None = None, *, prices: PriceTable | None = None
    ) -> None:
        self.budget = budget or TokenBudget()
        self.prices = prices or PriceTable()
        self.calls: list[CallRecord] = []
        self._session = Usage(0, 0, 0)
        self._operation = Usage(0, 0, 0)
        self._runs: dict[str, Usage] = {}

    @property
    def session(self) -> Usage:
        return self._session

    @property
    def used(self) -> int:
        return self._session.total_tokens

    @property
    def remaining(self) -> int | None:
        return None if self.budget.limit is None else max(0, self.budget.limit - self.used)

    @property
    def state(self) -> BudgetState:
        return self.budget.state(self.used)

    @property
    def cost(self) -> float | None:
        """Total cost of the calls whose model has a price; None if none has."""
        costs = [c.cost for c in self.calls if c.cost is not None]
        return sum(costs) if costs else None

    def run(self, run_id: str) -> Usage:
        return self._runs.get(run_id, Usage(0, 0, 0))

    def begin_operation(self) -> None:
        """Start counting a new current operation (one user request)."""
        self._operation = Usage(0, 0, 0)

    def record(
        self, usage: Usage, *, model: str = "", run_id: str | None = None, purpose: str = ""
    ) -> BudgetState:
        """Add one call's actual usage; returns the budget state afterwards."""
        cost = self.prices.cost(model, usage) if model else None
        self.calls.append(CallRecord(model, usage, run_id, purpose, cost))
        self._session = self._session + usage
        self._operation = self._operation + usage
        if run_id is not None:
            self._runs[run_id] = self.run(run_id) + usage
        return self.state

    def can_afford(self, estimate: TokenEstimate | int = 0) -> bool:
        """Whether a call of ``estimate`` tokens fits in what is left of the budget."""
        needed = estimate.total if isinstance(estimate, TokenEstimate) else estimate
        remaining = self.remaining
        return remaining is None or (remaining > 0 and needed <= remaining)

    def check(self, estimate: TokenEstimate | int = 0) -> None:
        """The hard stop: raise ``LimitExceededError`` when the call would not fit."""
        if not self.can_afford(estimate):
            needed = estimate.total if isinstance(estimate, TokenEstimate) else estimate
            assert self.budget.limit is not None
            raise LimitExceededError("tokens", self.used + needed, self.budget.limit)

    def snapshot(self) -> TokenUsage:
        return TokenUsage(
            self._session, self._operation, self.budget.limit, self.budget.warning_threshold
        )

    def format(self) -> str:
        return format_usage(self.snapshot(), cost=self.cost)

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget.limit,
            "warning_threshold": self.budget.warning_threshold,
            "session": self._session.to_dict(),
            "runs": {k: v.to_dict() for k, v in self._runs.items()},
        }


@dataclass(frozen=True, slots=True)
class BudgetedStep(Generic[T]):
    """What one step of a budgeted loop produced."""

    result: T
    usage: Usage
    done: bool = False
    score: float | None = None
    """Higher is better; without scores the latest result counts as the best."""


@dataclass(frozen=True, slots=True)
class BudgetedOutcome(Generic[T]):
    result: T | None
    """The best result produced before stopping (None if no step completed)."""
    stopped_by: Literal["done", "budget", "max_steps"]
    steps: int
    usage: Usage
    warned: bool
    """True if the warning threshold was reached on the way."""


async def run_within_budget(
    step: Callable[[int], Awaitable[BudgetedStep[T]]],
    tracker: TokenTracker,
    *,
    max_steps: int,
    estimate: Callable[[int], TokenEstimate | int] | None = None,
) -> BudgetedOutcome[T]:
    """Run ``step(0)``, ``step(1)``, ... until one is done, the budget is used up, or
    ``max_steps`` ran; then return the best result so far: running out of budget is never a loss
    of the work done.

    Before each step the budget must have room for ``estimate(i)`` (when given); a step that
    pushes usage past the budget is the last one.
    """
    best: BudgetedStep[T] | None = None
    warned = False
    steps = 0
    start = tracker.session
    stopped: Literal["done", "budget", "max_steps"] = "max_steps"
    while steps < max_steps:
        if not tracker.can_afford(estimate(steps) if estimate is not None else 0):
            stopped = "budget"
            break
        outcome = await step(steps)
        steps += 1
        state = tracker.record(outcome.usage, purpose=f"step {steps}")
        warned = warned or state is not BudgetState.OK
        if best is None or _better(outcome, best):
            best = outcome
        if outcome.done:
            best = outcome
            stopped = "done"
            break
        if state is BudgetState.EXCEEDED:
            stopped = "budget"
            break
    session = tracker.session
    used = Usage(
        session.input_tokens - start.input_tokens,
        session.output_tokens - start.output_tokens,
        session.requests - start.requests,
    )
    return BudgetedOutcome(best.result if best else None, stopped, steps, used, warned)


def _better(new: BudgetedStep[Any], old: BudgetedStep[Any]) -> bool:
    if new.score is None or old.score is None:
        return True
    return new.score >= old.score
