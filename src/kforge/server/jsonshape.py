"""How deep and how large the JSON a client sends may be, and how a stored value too deep for a
response is shown instead of failing it."""

from __future__ import annotations

from typing import Any

from kforge import jsoncodec

__all__ = ["MAX_DEPTH", "MAX_VALUE_BYTES", "SHOWN_DEPTH", "check_shape", "clipped", "json_depth"]

MAX_DEPTH = 64
"""Levels of nesting accepted in agent arguments and answers; real ones use a handful."""
MAX_VALUE_BYTES = 500_000
"""Largest encoded size of agent arguments or an answer's modifications."""
SHOWN_DEPTH = 200
"""Levels a response shows of a stored value; the JSON encoder refuses past 255."""
NOT_SHOWN = f"(not shown: nested deeper than {SHOWN_DEPTH} levels)"


def json_depth(value: Any, *, stop: int) -> int:
    """Levels of lists and objects in ``value`` (a scalar is 0), counted up to ``stop + 1``."""
    deepest = 0
    level: list[Any] = [value]
    while level and deepest <= stop:
        containers = [v for v in level if isinstance(v, dict | list | tuple)]
        if not containers:
            break
        deepest += 1
        level = [
            child
            for c in containers
            for child in (c.values() if isinstance(c, dict) else c)
            if isinstance(child, dict | list | tuple)
        ]
    return deepest


def check_shape(value: Any, what: str) -> Any:
    """``value`` if it is at most ``MAX_DEPTH`` levels deep and ``MAX_VALUE_BYTES`` encoded,
    else a ValueError that says which limit it passed (for a pydantic validator)."""
    depth = json_depth(value, stop=MAX_DEPTH)
    if depth > MAX_DEPTH:
        raise ValueError(
            f"{what} nest more than {MAX_DEPTH} levels of lists and objects; flatten them "
            f"(at most {MAX_DEPTH} levels)"
        )
    size = len(jsoncodec.dumps_bytes(value))
    if size > MAX_VALUE_BYTES:
        raise ValueError(
            f"{what} take {size} bytes as JSON, more than {MAX_VALUE_BYTES}; pass large "
            "documents through a corpus (POST /corpora/NAME/ingest) and refer to them by name"
        )
    return value


def clipped(value: Any, depth: int = SHOWN_DEPTH) -> tuple[Any, bool]:
    """``value`` with whatever lies deeper than ``depth`` levels replaced by a note, and
    whether anything was; values stored before their depth was checked stay readable."""
    if not isinstance(value, dict | list | tuple):
        return value, False
    if depth <= 0:
        return NOT_SHOWN, True
    cut = False
    if isinstance(value, dict):
        shown: dict[str, Any] = {}
        for key, item in value.items():
            shown[key], was_cut = clipped(item, depth - 1)
            cut = cut or was_cut
        return shown, cut
    items = []
    for item in value:
        shown_item, was_cut = clipped(item, depth - 1)
        items.append(shown_item)
        cut = cut or was_cut
    return items, cut
