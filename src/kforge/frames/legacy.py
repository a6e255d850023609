"""Frames of the old tool-call vocabulary, read as today's: four frames per call became one call
frame and one result frame. Stores rewrite whole logs (``kforge.store.migrations``); this reads
the frames one at a time, for logs that were never migrated (exports, the memory store)."""

from __future__ import annotations

from typing import Any

from kforge.frames.vocabulary import ToolCallFrame, ToolResultFrame

__all__ = ["LEGACY_TOOL_TYPES", "upgrade_legacy_frame"]

LEGACY_TOOL_TYPES = frozenset(
    {"tool.start", "tool.success", "tool.error", "agent.tool_call", "agent.tool_result"}
)
"""Before one call frame and one result frame, a call was recorded as these four (two by the
execution wrapper, two by the agent) with renamed copies of the same fields."""


def upgrade_legacy_frame(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` in today's vocabulary when it is a frame of the old tool-call vocabulary.

    Frame by frame: each old frame becomes a call or a result frame. A store upgrades whole
    logs instead (``kforge.store.migrations``), which also folds the agent's copies into the
    execution frames so that each call is one call and one result frame.
    """
    kind = data.get("type")
    if kind not in LEGACY_TOOL_TYPES and not (
        kind == "agent.observation" and "tool_result_frame_id" in data
    ):
        return data
    keep: dict[str, Any] = {
        k: data[k] for k in ("id", "run_id", "seq", "created_at", "tool_name") if k in data
    }
    if kind == "agent.observation":
        upgraded = {k: v for k, v in data.items() if k != "tool_result_frame_id"}
        upgraded.setdefault("call_id", "")
        return upgraded
    if kind in ("tool.start", "agent.tool_call"):
        return {
            **keep,
            "type": ToolCallFrame.TYPE,
            "call_id": data.get("call_id", ""),
            "arguments": data.get("arguments", data.get("tool_arguments", {})),
            "reasoning": data.get("reasoning", ""),
            "read_only": data.get("read_only", False),
            "iteration": data.get("iteration", 0),
            "plan_frame_id": data.get("plan_frame_id"),
        }
    success = kind == "tool.success" or (kind == "agent.tool_result" and data.get("success"))
    error = str(data.get("error", data.get("error_message", "")))
    summary = data.get("result_summary", data.get("result_text", error))
    return {
        **keep,
        "type": ToolResultFrame.TYPE,
        "call_id": data.get("call_id", ""),
        "success": bool(success),
        "summary": summary,
        "error": error,
        "result": data.get("result") or {},
        "execution_time_ms": data.get("execution_time_ms", 0.0),
        "cached": data.get("cached", False),
    }
