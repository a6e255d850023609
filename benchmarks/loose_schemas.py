"""Normalize loose, Python-flavoured parameter schemas into JSON Schema 2020-12.

Many function-calling datasets and older tool formats write Python type names ("dict", "float",
"tuple", "any"), non-standard keys ("optional"), ``"default": null`` on non-null types, and an
``enum`` on an array meant for its items. ``normalize_schema`` maps them to standard JSON Schema
so the same validator serves every source.
"""

from __future__ import annotations

from typing import Any

from kforge.errors import ToolDefinitionError

__all__ = ["TYPE_ALIASES", "normalize_schema"]

TYPE_ALIASES: dict[str, str | None] = {
    "string": "string",
    "str": "string",
    "integer": "integer",
    "int": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "object": "object",
    "dict": "object",
    "null": "null",
    "none": "null",
    "any": None,
}
"""Type name (lower-cased) -> JSON Schema type; None means "any value"."""

_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains")
_DROPPED = ("optional",)


def normalize_schema(schema: Any, *, where: str = "") -> dict[str, Any]:
    """A JSON Schema 2020-12 copy of ``schema``; ``ToolDefinitionError`` names any unknown type."""
    if not isinstance(schema, dict):
        raise ToolDefinitionError(
            f"schema at {where or '(root)'} must be an object (got {type(schema).__name__})"
        )
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key == "type":
            mapped = _map_type(value, where)
            if mapped is not None:
                out["type"] = mapped
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {
                name: normalize_schema(sub, where=_join(where, str(name)))
                for name, sub in value.items()
            }
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [normalize_schema(sub, where=f"{where}[{i}]") for i, sub in enumerate(value)]
        elif key in _SUBSCHEMA_ONE and isinstance(value, dict):
            out[key] = normalize_schema(value, where=f"{where}[]" if key == "items" else where)
        else:
            out[key] = value
    if (
        out.get("type") == "object"
        and "properties" not in out
        and "additionalProperties" not in out
    ):
        out.setdefault("properties", {})
    _item_enum_from_array(out)
    _nullable_when_default_is_null(out)
    return out


def _item_enum_from_array(schema: dict[str, Any]) -> None:
    """``{"type": "array", "enum": ["a", "b"]}`` means each item is "a" or "b"."""
    values = schema.get("enum")
    items = schema.get("items")
    if (
        schema.get("type") == "array"
        and isinstance(values, list)
        and values
        and not any(isinstance(v, list | dict) for v in values)
        and isinstance(items, dict)
        and "enum" not in items
    ):
        schema["items"] = {**items, "enum": schema.pop("enum")}


def _nullable_when_default_is_null(schema: dict[str, Any]) -> None:
    """A default is an acceptable value, so ``"default": null`` makes the argument nullable."""
    if "default" not in schema or schema["default"] is not None or "type" not in schema:
        return
    kind = schema["type"]
    kinds = kind if isinstance(kind, list) else [kind]
    if "null" not in kinds:
        schema["type"] = [*kinds, "null"]
    values = schema.get("enum")
    if isinstance(values, list) and None not in values:
        schema["enum"] = [*values, None]


def _map_type(value: Any, where: str) -> str | list[str] | None:
    if isinstance(value, list):
        mapped = [_map_one(v, where) for v in value]
        if any(m is None for m in mapped):
            return None
        return [m for m in mapped if m is not None]
    return _map_one(value, where)


def _map_one(value: Any, where: str) -> str | None:
    key = str(value).strip().lower()
    if key not in TYPE_ALIASES:
        known = ", ".join(sorted(TYPE_ALIASES))
        raise ToolDefinitionError(
            f"schema at {where or '(root)'} has unknown type {value!r}; known types: {known}"
        )
    return TYPE_ALIASES[key]


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
