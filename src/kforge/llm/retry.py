"""Retries for transient model errors: exponential backoff with jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = ["RetryPolicy", "RetryState", "Transient", "parse_retry_after", "retry_call"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry a call that failed for a transient reason."""

    max_attempts: int = 4
    """Attempts in total, the first included; 1 disables retries."""
    base_delay_s: float = 0.5
    """Backoff before the second attempt; it grows by ``multiplier`` per attempt."""
    multiplier: float = 2.0
    max_delay_s: float = 20.0
    """Cap on one computed backoff (a server's Retry-After is honoured up to ``max_retry_after_s``)."""
    jitter: float = 0.5
    """Fraction of each backoff that is randomised: the delay is uniform in [d*(1-jitter), d]."""
    max_retry_after_s: float = 60.0
    """A server asking to wait longer than this is not waited for: the call fails at once."""

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The delay after failed attempt number ``attempt`` (1-based), with jitter."""
        delay = min(self.max_delay_s, self.base_delay_s * self.multiplier ** (attempt - 1))
        jitter = min(max(self.jitter, 0.0), 1.0)
        return rng.uniform(delay * (1.0 - jitter), delay)


@dataclass(frozen=True, slots=True)
class Transient:
    """A failure worth retrying, and how long the server asked us to wait (if it did)."""

    reason: str
    retry_after_s: float | None = None


@dataclass(slots=True)
class RetryState:
    """What happened while retrying; read it to explain a final failure."""

    attempts: int = 0
    delays: list[float] = field(default_factory=list)
    gave_up: str = ""
    """Why retrying stopped early (empty when attempts simply ran out or the error was permanent)."""


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


async def retry_call(
    op: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    classify: Callable[[Exception], Transient | None],
    state: RetryState | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    rng: random.Random | None = None,
) -> T:
    """Await ``op()`` until it succeeds, a permanent error occurs or attempts run out.

    ``classify`` says whether an exception is transient. The last exception is re-raised
    unchanged; ``state`` records attempts and delays so the caller can explain it.
    Cancellation is never retried.
    """
    state = state if state is not None else RetryState()
    pause = sleep or asyncio.sleep
    rand = rng or random.Random()
    while True:
        state.attempts += 1
        try:
            return await op()
        except Exception as exc:
            transient = classify(exc)
            if transient is None or state.attempts >= policy.max_attempts:
                raise
            if transient.retry_after_s is not None:
                if transient.retry_after_s > policy.max_retry_after_s:
                    state.gave_up = (
                        f"the server asked to wait {transient.retry_after_s:g} s, longer than "
                        f"the {policy.max_retry_after_s:g} s this call may wait"
                    )
                    raise
                delay = transient.retry_after_s
            else:
                delay = policy.backoff(state.attempts, rand)
            state.delays.append(delay)
            await pause(delay)
