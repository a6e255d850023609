"""ToolResult: what a tool returns, success or error, as content blocks plus structured data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kforge.frames.slots import built_by_slots
from kforge.tools.content import ContentBlock

__all__ = ["ToolResult"]

_SUMMARY_CHARS = 200


@built_by_slots
@dataclass(frozen=True, slots=True)
class ToolResult:
    content: tuple[ContentBlock, ...]
    is_error: bool = False
    structured_content: dict[str, Any] | None = None
    """Machine-readable result; for errors, ``{"error": {"kind": ..., ...}}`` when known."""

    @classmethod
    def success(cls, text: str, structured: dict[str, Any] | None = None) -> ToolResult:
        return cls(content=(ContentBlock.of_text(text),), structured_content=structured)

    @classmethod
    def error(
        cls, message: str, *, kind: str | None = None, details: dict[str, Any] | None = None
    ) -> ToolResult:
        """An error result. ``kind`` is a stable tag callers can branch on (e.g. ``unreachable``)."""
        structured: dict[str, Any] | None = None
        if kind is not None or details:
            structured = {"error": {"kind": kind or "error", "message": message, **(details or {})}}
        return cls(
            content=(ContentBlock.of_text(f"Error: {message}"),),
            is_error=True,
            structured_content=structured,
        )

    @property
    def text(self) -> str:
        """All content rendered as text, blocks separated by blank lines."""
        return "\n\n".join(block.as_text() for block in self.content)

    @property
    def error_kind(self) -> str | None:
        if not self.is_error or not self.structured_content:
            return None
        error = self.structured_content.get("error")
        if isinstance(error, dict):
            kind = error.get("kind")
            return kind if isinstance(kind, str) else None
        return None

    def summary(self, limit: int = _SUMMARY_CHARS) -> str:
        """One line for frames and logs."""
        text = " ".join(self.text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def to_dict(self) -> dict[str, Any]:
        """What a ``tool.result`` frame records, read back by ``jsoncodec.convert``: blocks
        without their unset fields (``jsoncodec.to_builtins`` writes them as null, twice the
        bytes of a short result)."""
        data: dict[str, Any] = {
            "content": [block.to_dict() for block in self.content],
            "is_error": self.is_error,
        }
        if self.structured_content is not None:
            data["structured_content"] = self.structured_content
        return data
