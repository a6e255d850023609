"""Agent arguments, defined once as a dataclass.

``parse_arguments`` validates a run's arguments against an agent's arguments dataclass when the
agent is built, strictly (``"false"`` is not a boolean), with errors that name the argument.
An agent's state dataclass is saved and restored by ``kforge.jsoncodec`` (``to_builtins`` and
``convert``), by its fields' types.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar, get_type_hints

from kforge.errors import ValidationError

__all__ = ["parse_arguments"]

T = TypeVar("T")


_ADAPTERS: dict[type[Any], dict[str, Any]] = {}


def _adapters(cls: type[Any]) -> dict[str, Any]:
    """A strict validator per argument of the dataclass ``cls``, by name (built once)."""
    adapters = _ADAPTERS.get(cls)
    if adapters is None:
        from pydantic import ConfigDict, TypeAdapter

        hints = get_type_hints(cls, include_extras=True)
        strict = ConfigDict(strict=True)
        adapters = {
            f.name: TypeAdapter(hints[f.name], config=strict) for f in fields(cls) if f.init
        }
        _ADAPTERS[cls] = adapters
    return adapters


def parse_arguments(cls: type[T], args: Mapping[str, Any], *, agent: str) -> T:
    """``args`` as ``cls`` (a dataclass): unknown names are ignored and null means the default;
    a ``ValidationError`` names the first argument that does not fit and the rule it breaks."""
    from pydantic import ValidationError as PydanticError

    checked: dict[str, Any] = {}
    for name, adapter in _adapters(cls).items():
        value = args.get(name)
        if value is None:
            continue
        try:
            checked[name] = adapter.validate_python(value)
        except PydanticError as exc:
            error = exc.errors(include_url=False)[0]
            where = "".join(f"[{part!r}]" for part in error["loc"])
            rule = _rule(error)
            if rule == "must be an integer" and "'ge': 1" in repr(adapter.core_schema):
                rule = "must be a positive integer"
            raise ValidationError(
                f"{agent} agent: '{name}'{where} {rule} (got {value!r:.100})"
            ) from None
    return cls(**checked)


def _rule(error: Any) -> str:
    kind, context = error["type"], error.get("ctx") or {}
    if kind.startswith("bool"):
        return "must be true or false"
    if kind == "greater_than_equal" and context.get("ge") == 1:
        return "must be a positive integer"
    if kind == "greater_than_equal":
        return f"must be at least {context.get('ge')}"
    if kind == "greater_than" and not context.get("gt"):
        return "must be a positive number"
    if kind == "greater_than":
        return f"must be greater than {context.get('gt')}"
    if kind == "less_than_equal":
        return f"must be at most {context.get('le')}"
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(context.get("expected", "")))
        return f"must be one of {', '.join(choices)}"
    if kind.startswith("int"):
        return "must be an integer"
    if kind.startswith("float"):
        return "must be a number"
    if kind.startswith("string"):
        return "must be text"
    if kind.startswith(("list", "tuple")):
        return "must be a list"
    if kind.startswith("dict"):
        return "must be an object"
    if kind == "missing":
        return "is required"
    return str(error.get("msg", "is not valid")).lower()
