"""ToolContext: what a running tool may know about the run that called it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kforge.llm.base import Model

__all__ = ["ToolContext"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    run_id: str = ""
    call_id: str = ""
    services: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The run's services (e.g. ``agents`` for fork/wait); empty outside a run."""
    model: Model | None = None
    """The run's model, for model-backed tools that were not given one."""
