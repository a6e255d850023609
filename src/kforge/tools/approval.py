"""Which tool calls need a person's approval before they run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kforge.tools.base import Tool

__all__ = ["ApprovalPolicy"]


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """By default a tool needs approval when it says so, or when its annotations say destructive.

    ``allow`` lists tools never asked about; ``ask`` lists tools always asked about;
    ``auto_approve`` approves everything not in ``ask`` (for trusted, unattended runs).
    """

    auto_approve: bool = False
    allow: frozenset[str] = field(default_factory=frozenset)
    ask: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(
        cls, *, auto_approve: bool = False, allow: Iterable[str] = (), ask: Iterable[str] = ()
    ) -> ApprovalPolicy:
        return cls(auto_approve=auto_approve, allow=frozenset(allow), ask=frozenset(ask))

    def needs_approval(self, tool: Tool) -> bool:
        if tool.name in self.ask:
            return True
        if self.auto_approve or tool.name in self.allow:
            return False
        return tool.needs_approval()
