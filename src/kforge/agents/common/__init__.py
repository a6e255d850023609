"""Code several agents share: ``evidence`` (retrieval reduced to the passages graded relevant),
``writing`` (cited answers, insights and frontier questions), ``cited`` (both, for agents that
explain) and ``answer`` (the model's own answer when no passage is relevant, the short line)."""

from __future__ import annotations

__all__: list[str] = []
