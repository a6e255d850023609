"""Batch parameters of the PostgreSQL store's writes: many values sent as one text the server
splits, which costs the client far less than adapting a list of thousands of values item by
item."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["int_array", "numbers", "text_array"]

_SEPARATOR = "\x1e"
"""Splits the texts of ``text_array`` (JSON never holds it: it writes control characters
escaped)."""


def numbers(values: Iterable[int]) -> str:
    """Integers as one text, for ``int_array``."""
    return ",".join(map(str, values))


def int_array(kind: str = "int") -> str:
    """The SQL of a ``kind[]`` parameter sent as ``numbers`` (or as ``true,false`` texts)."""
    return f"string_to_array(%s, ',')::{kind}[]"


def text_array(values: Sequence[str]) -> tuple[str, Any]:
    """A text[] parameter: ``(SQL, value)``. Values travel as one text the server splits; as a
    list when a value holds the separator or is empty."""
    if all(value and _SEPARATOR not in value for value in values):
        return "string_to_array(%s, E'\\x1e')", _SEPARATOR.join(values)
    return "%s::text[]", list(values)
