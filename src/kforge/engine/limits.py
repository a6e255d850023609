"""Run limits: every run is bounded by steps, phase visits, wall time, tokens and cost.

Token and cost limits are enforced by ``kforge.memory.tokens.RunBudget``: a ``limit.warning``
frame when a run crosses ``token_warning_threshold`` of one, and before the next model call a
pause with a ``limit.reached`` frame once one is used up.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunLimits"]


@dataclass(frozen=True, slots=True)
class RunLimits:
    max_steps: int = 200
    """Committed steps per run, across all its stretches."""
    max_phase_visits: int = 8
    """Visits to any one phase (entries plus re-runs)."""
    max_wall_time_s: float = 3600.0
    """Seconds spent running (waiting for a person does not count)."""
    max_tokens: int | None = None
    """Model tokens, input plus output, across the run."""
    max_session_tokens: int | None = None
    """Model tokens across all runs of the run's session, this one included."""
    max_cost_usd: float | None = None
    """US dollars across the run, priced from the config file's ``[prices]``."""
    token_warning_threshold: float = 0.8
    """Fraction of a token or cost limit at which a ``limit.warning`` frame is emitted."""
