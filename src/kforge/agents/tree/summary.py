"""The tree agent's final text: the main answer, each subagent's result, what stays uncertain."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kforge.agents.tree.state import TreeState

__all__ = ["compose_summary", "subagent_line", "uncertainties"]

_MARKERS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")
_SUBAGENT_CHARS = 600


def subagent_line(child: dict[str, Any]) -> str:
    """One subagent's result as a list item; its citation markers become its source files."""
    status = child.get("status")
    prompt = child.get("prompt", "")
    if status == "deleted":
        return f"- {prompt} (deleted by the user before it finished)"
    if status == "completed":
        text = _MARKERS.sub("", str(child.get("main_answer") or child.get("answer") or ""))
        text = " ".join(text.split())
        if len(text) > _SUBAGENT_CHARS:
            text = text[: _SUBAGENT_CHARS - 1].rstrip() + "…"
        files = sorted(set(child.get("sources") or []))
        cited = f" (sources: {', '.join(files)})" if files else ""
        return f"- {prompt} {text or '(no answer)'}{cited}"
    detail = child.get("error") or status or "unknown"
    return f"- {prompt} (no answer: {detail})"


def uncertainties(state: TreeState) -> list[str]:
    """What the answer could not settle: declined questions, subagents without an answer,
    a main execution that found nothing."""
    found = [f"you declined: {q}" for q in state.declined]
    for child in state.subagents:
        if child.get("status") not in (None, "completed"):
            found.append(f"subagent '{child.get('prompt', '')}' is {child.get('status')}")
    main = state.main
    if main is not None and not main.citations and main.path in ("none", "extractive"):
        found.append("the documents did not answer the request")
    return found


def compose_summary(state: TreeState) -> str:
    parts = [((state.main.text if state.main else "") or "(no main answer)").strip()]
    if state.subagents:
        parts.append("Subquestions:\n" + "\n".join(subagent_line(c) for c in state.subagents))
    if state.note:
        parts.append(f"Your note: {state.note}")
    if state.declined:
        parts.append("Not answered by you: " + "; ".join(state.declined))
    return "\n\n".join(parts)
