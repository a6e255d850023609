"""Behavioural hints a tool declares about itself (MCP's tool annotations)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ToolAnnotations"]


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Hints, not guarantees: kforge uses them to decide on approval, caching and replay."""

    title: str | None = None
    read_only_hint: bool = False
    """The tool does not modify its environment."""
    destructive_hint: bool = True
    """The tool may destroy or overwrite data (meaningful only when not read-only)."""
    idempotent_hint: bool = False
    """Calling it again with the same arguments has no further effect."""
    open_world_hint: bool = False
    """The tool talks to external systems (the web, a SaaS API, ...)."""

    @classmethod
    def read_only(cls, *, title: str | None = None, open_world: bool = False) -> ToolAnnotations:
        """A tool that only reads: never destructive, safe to repeat."""
        return cls(
            title=title,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=open_world,
        )

    @property
    def is_destructive(self) -> bool:
        return not self.read_only_hint and self.destructive_hint

    @property
    def is_safe_to_repeat(self) -> bool:
        """Read-only and idempotent: may be re-run on resume and cached."""
        return self.read_only_hint and self.idempotent_hint

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "read_only_hint": self.read_only_hint,
            "destructive_hint": self.destructive_hint,
            "idempotent_hint": self.idempotent_hint,
            "open_world_hint": self.open_world_hint,
        }
        if self.title is not None:
            data["title"] = self.title
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> ToolAnnotations:
        data = data or {}
        default = cls()
        return cls(
            title=data.get("title"),
            read_only_hint=bool(data.get("read_only_hint", default.read_only_hint)),
            destructive_hint=bool(data.get("destructive_hint", default.destructive_hint)),
            idempotent_hint=bool(data.get("idempotent_hint", default.idempotent_hint)),
            open_world_hint=bool(data.get("open_world_hint", default.open_world_hint)),
        )
