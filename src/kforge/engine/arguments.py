"""Agent arguments and agent state, each defined once as a dataclass.

``parse_arguments`` validates a run's arguments against an agent's arguments dataclass when the
agent is built, strictly (``"false"`` is not a boolean), with errors that name the argument.
``state_to_dict`` and ``load_state`` round-trip an agent's state dataclass through JSON by its
fields, so a field is declared once and saved and restored without being listed again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import Field, fields
from typing import Any, TypeVar, get_type_hints

from kforge.errors import ValidationError

__all__ = ["codec", "load_state", "parse_arguments", "state_to_dict"]

T = TypeVar("T")
S = TypeVar("S")


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


def codec(dump: Callable[[Any], Any], load: Callable[[Any], Any]) -> dict[str, Any]:
    """``field(metadata=codec(dump, load))``: a state field held as an object that has its own
    JSON form."""
    return {"dump": dump, "load": load}


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


def _saved(f: Field[Any]) -> bool:
    return not f.name.startswith("_")


_SAVED: dict[type[Any], tuple[tuple[str, Callable[[Any], Any] | None], ...]] = {}


def state_to_dict(state: Any) -> dict[str, Any]:
    """The JSON form of the dataclass ``state``: one entry per field."""
    saved = _SAVED.get(type(state))
    if saved is None:  # worked out once per class: agents save their state every step
        saved = _SAVED[type(state)] = tuple(
            (f.name, f.metadata.get("dump")) for f in fields(state) if _saved(f)
        )
    out: dict[str, Any] = {}
    for name, dump in saved:
        value = getattr(state, name)
        out[name] = dump(value) if dump is not None and value is not None else _copy(value)
    return out


def load_state(state: S, data: Mapping[str, Any]) -> S:
    """Set the fields of the dataclass ``state`` that ``data`` holds (others keep their value)."""
    for f in fields(state):  # type: ignore[arg-type]
        if _saved(f) and f.name in data:
            value = data[f.name]
            load = f.metadata.get("load")
            setattr(
                state,
                f.name,
                load(value) if load is not None and value is not None else _copy(value),
            )
    return state
