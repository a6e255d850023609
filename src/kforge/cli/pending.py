"""The question a run waits on, rendered for a person: what to review (a question tree, sources),
the options, and the keys a ``modify`` answer may carry."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from kforge import jsoncodec
from kforge.store.base import RunRecord

__all__ = ["render_pending", "render_review"]

_HIDDEN = frozenset({"phase", "checkpoint_id", "modify_keys"})


def render_review(payload: dict[str, Any]) -> list[str]:
    """The payload's reviewable parts: the question tree as a tree, anything else as JSON."""
    lines: list[str] = []
    if payload.get("question"):
        lines.append(f"question   {payload['question']}")
    categories = payload.get("categories")
    if isinstance(categories, list):
        lines.append("tree")
        for number, category in enumerate(categories, 1):
            if not isinstance(category, dict):
                continue
            lines.append(f"  {number}. {category.get('name', '')}")
            for question in category.get("questions") or []:
                text = question.get("text", "") if isinstance(question, dict) else question
                lines.append(f"     - {text}")
    rest = {k: v for k, v in payload.items() if k not in _HIDDEN | {"question", "categories"}}
    for key, value in rest.items():
        if isinstance(value, str):
            indent = "\n" + " " * (max(10, len(key)) + 1)
            lines.append(f"{key:<10} " + indent.join(_wrapped(value)))
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            lines.append(f"{key:<10} " + ("" if value else "(none)"))
            lines += [f"  - {v}" for v in value]
            continue
        if key == "knowledge" and isinstance(value, dict):
            lines.append("knowledge")
            for level, items in value.items():
                shown = ", ".join(map(str, items)) if isinstance(items, list) else str(items)
                lines.append(f"  {level:<15} {shown or '-'}")
            continue
        text = jsoncodec.dumps(value, indent=True)
        if len(text) > 2000:
            text = text[:2000] + " …"
        lines.append(f"{key:<10} " + text.replace("\n", "\n           "))
    return lines


def _wrapped(text: str, width: int = 88) -> list[str]:
    import textwrap

    return textwrap.wrap(" ".join(text.split()), width) or [""]


def render_pending(run: RunRecord, hint: Callable[[str], str]) -> str:
    """``runs show``'s account of the pending interaction; ``hint`` makes a pasteable command."""
    pending = run.pending_interaction or {}
    payload = dict(pending.get("payload") or {})
    lines = [f"waiting    {pending.get('kind')}: {pending.get('prompt')}"]
    lines += render_review(payload)
    options = list(pending.get("options") or [])
    if options:
        lines.append(f"options    {', '.join(options)}")
        lines.append(f"answer     {hint(f'runs resume {run.id} --answer {options[0]}')}")
    else:
        lines.append(f"answer     {hint(f'runs resume {run.id} --answer TEXT')}")
    keys = payload.get("modify_keys")
    if "modify" in options and isinstance(keys, dict) and keys:
        example = jsoncodec.dumps(
            {"action": "modify", "modifications": {next(iter(keys)): "..."}}, spaced=True
        )
        lines.append(f"modify     {hint(f'runs resume {run.id} --answer {shlex.quote(example)}')}")
        lines.append("           where modifications may hold:")
        width = max(len(k) for k in keys)
        lines += [f"             {k:<{width}}  {v}" for k, v in keys.items()]
    elif "modify" in options:
        lines.append(
            "modify     "
            + hint(f"runs resume {run.id} --answer")
            + ' \'{"action": "modify", "modifications": {...}}\''
        )
    return "\n".join(lines)
