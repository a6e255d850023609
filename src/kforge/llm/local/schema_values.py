"""Random values that validate against a JSON Schema: the engine of the schema-driven TestModel."""

from __future__ import annotations

import math
import random
import re
import string
from dataclasses import dataclass
from typing import Any

from kforge.errors import ModelError
from kforge.llm.local.regex_values import string_matching
from kforge.llm.structured import schema_errors

__all__ = ["UnsatisfiableSchemaError", "generate_value", "valid_value"]

_FORMATS = {
    "date": "2024-05-17",
    "time": "12:30:00Z",
    "date-time": "2024-05-17T12:30:00Z",
    "email": "ada@example.com",
    "idn-email": "ada@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.7",
    "ipv6": "2001:db8::7",
    "uri": "https://example.com/a",
    "iri": "https://example.com/a",
    "uri-reference": "/a/b",
    "iri-reference": "/a/b",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "duration": "P3D",
    "json-pointer": "/a/0",
    "regex": "^a+$",
}
_MAX_DEPTH = 6


class UnsatisfiableSchemaError(ModelError):
    """No value could be generated for a schema (it may be contradictory)."""


@dataclass
class _Ctx:
    rng: random.Random
    root: dict[str, Any]


def valid_value(schema: dict[str, Any] | bool, *, seed: int = 0, attempts: int = 30) -> Any:
    """A value that validates against ``schema``; deterministic for a given ``seed``.

    Raises ``UnsatisfiableSchemaError`` when no attempt produced a valid value.
    """
    if schema is True:
        return "value"
    if schema is False:
        raise UnsatisfiableSchemaError("the schema 'false' accepts no value")
    problems: list[str] = []
    for attempt in range(attempts):
        rng = random.Random(seed * 7919 + attempt)
        try:
            value = generate_value(schema, rng, minimal=attempt >= attempts // 2)
        except (UnsatisfiableSchemaError, re.error, RecursionError) as exc:
            problems = [str(exc)]
            continue
        problems = schema_errors(value, schema)
        if not problems:
            return value
    raise UnsatisfiableSchemaError(
        f"could not generate a value for schema {str(schema)[:200]}: {'; '.join(problems)}"
    )


def generate_value(schema: dict[str, Any], rng: random.Random, *, minimal: bool = False) -> Any:
    """One random value shaped by ``schema`` (best effort; ``valid_value`` checks and retries)."""
    ctx = _Ctx(rng, schema)
    return _gen(schema, ctx, 6 if minimal else 0)


def _resolve(ref: str, ctx: _Ctx) -> Any:
    if not ref.startswith("#"):
        raise UnsatisfiableSchemaError(f"only local $ref is supported, got {ref!r}")
    node: Any = ctx.root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit():
            node = node[int(part)]
        else:
            raise UnsatisfiableSchemaError(f"$ref {ref!r} does not resolve")
    return node


def _merge(schemas: list[Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for sub in schemas:
        if not isinstance(sub, dict):
            continue
        for key, value in sub.items():
            if key == "properties":
                merged.setdefault("properties", {}).update(value)
            elif key == "required":
                merged["required"] = sorted({*merged.get("required", []), *value})
            elif key in ("minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"):
                merged[key] = max(merged.get(key, value), value)
            elif key in ("maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"):
                merged[key] = min(merged.get(key, value), value)
            else:
                merged.setdefault(key, value)
    return merged


def _type_of(schema: dict[str, Any], ctx: _Ctx) -> str | None:
    declared = schema.get("type")
    if isinstance(declared, list):
        return str(ctx.rng.choice(declared)) if declared else None
    if isinstance(declared, str):
        return declared
    keys = schema.keys()
    if keys & {
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "patternProperties",
    }:
        return "object"
    if keys & {"items", "prefixItems", "minItems", "maxItems", "contains", "uniqueItems"}:
        return "array"
    if keys & {"minLength", "maxLength", "pattern", "format"}:
        return "string"
    if keys & {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}:
        return "number"
    return None


def _gen(schema: Any, ctx: _Ctx, depth: int) -> Any:
    if schema is True or schema is None:
        return "value"
    if schema is False:
        raise UnsatisfiableSchemaError("the schema 'false' accepts no value")
    if not isinstance(schema, dict):
        raise UnsatisfiableSchemaError(f"not a schema: {schema!r}")
    if "$ref" in schema:
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return _gen(_merge([_resolve(schema["$ref"], ctx), rest]), ctx, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        if not schema["enum"]:
            raise UnsatisfiableSchemaError("enum is empty")
        return ctx.rng.choice(schema["enum"])
    if "allOf" in schema:
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        parts = [
            _resolve(s["$ref"], ctx) if isinstance(s, dict) and "$ref" in s else s
            for s in schema["allOf"]
        ]
        return _gen(_merge([rest, *parts]), ctx, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            rest = {k: v for k, v in schema.items() if k != key}
            options = list(schema[key])
            if depth >= _MAX_DEPTH:
                options.sort(key=lambda o: len(str(o)))
                choice = options[0]
            else:
                choice = ctx.rng.choice(options)
            return _gen(_merge([rest, choice]) if rest else choice, ctx, depth + 1)
    kind = _type_of(schema, ctx)
    if kind is None:
        return ctx.rng.choice(["value", 1, True, None]) if depth < _MAX_DEPTH else None
    if kind == "null":
        return None
    if kind == "boolean":
        return ctx.rng.random() < 0.5
    if kind in ("integer", "number"):
        return _number(schema, ctx, integer=kind == "integer")
    if kind == "string":
        return _string(schema, ctx)
    if kind == "array":
        return _array(schema, ctx, depth)
    if kind == "object":
        return _object(schema, ctx, depth)
    raise UnsatisfiableSchemaError(f"unknown type {kind!r}")


def _number(schema: dict[str, Any], ctx: _Ctx, *, integer: bool) -> int | float:
    low = schema.get("minimum", -math.inf)
    high = schema.get("maximum", math.inf)
    ex_low = schema.get("exclusiveMinimum")
    ex_high = schema.get("exclusiveMaximum")
    step = schema.get("multipleOf")
    if integer:
        lo_raw, hi_raw = _bounded(
            low if ex_low is None else max(low, ex_low),
            high if ex_high is None else min(high, ex_high),
            100,
        )
        lo = math.ceil(lo_raw)
        if ex_low is not None and lo <= ex_low:
            lo = math.floor(ex_low) + 1
        hi = math.floor(hi_raw)
        if ex_high is not None and hi >= ex_high:
            hi = math.ceil(ex_high) - 1
        if step:
            first = math.ceil(lo / step)
            last = math.floor(hi / step)
            if first > last:
                raise UnsatisfiableSchemaError(f"no multiple of {step} in [{lo}, {hi}]")
            return int(ctx.rng.randint(first, last) * step)
        if lo > hi:
            raise UnsatisfiableSchemaError(f"no integer in [{lo}, {hi}]")
        return ctx.rng.randint(int(lo), int(hi))
    lo_f = low if ex_low is None else max(low, ex_low)
    hi_f = high if ex_high is None else min(high, ex_high)
    lo_f, hi_f = _bounded(lo_f, hi_f, 100.0)
    if step:
        first = math.ceil(lo_f / step)
        last = math.floor(hi_f / step)
        if first > last:
            raise UnsatisfiableSchemaError(f"no multiple of {step} in [{lo_f}, {hi_f}]")
        multiple: float = ctx.rng.randint(first, last) * step
        return int(multiple) if float(multiple).is_integer() else multiple
    if lo_f > hi_f:
        raise UnsatisfiableSchemaError(f"no number in [{lo_f}, {hi_f}]")
    value = round(ctx.rng.uniform(lo_f, hi_f), 3)
    if (ex_low is not None and value <= ex_low) or not lo_f <= value <= hi_f:
        value = (lo_f + hi_f) / 2
    if ex_high is not None and value >= ex_high:
        value = (lo_f + hi_f) / 2
    return value


def _bounded(lo: float, hi: float, span: float) -> tuple[Any, Any]:
    if math.isinf(lo) and math.isinf(hi):
        return -span if span > 0 else 0, span
    if math.isinf(lo):
        return hi - span, hi
    if math.isinf(hi):
        return lo, lo + span
    return lo, hi


def _string(schema: dict[str, Any], ctx: _Ctx) -> str:
    low = int(schema.get("minLength", 0))
    high = int(schema.get("maxLength", max(low, 12)))
    if "pattern" in schema:
        return string_matching(schema["pattern"], ctx.rng)
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt]
    length = ctx.rng.randint(low, max(low, min(high, low + 12)))
    return "".join(ctx.rng.choice(string.ascii_lowercase) for _ in range(length))


def _array(schema: dict[str, Any], ctx: _Ctx, depth: int) -> list[Any]:
    prefix = list(schema.get("prefixItems", []))
    items = schema.get("items", {} if not prefix else False)
    low = int(schema.get("minItems", 0))
    high = int(schema.get("maxItems", max(low, len(prefix)) + 3))
    upper = low if depth >= _MAX_DEPTH else min(high, max(low, len(prefix)) + 2)
    count = ctx.rng.randint(low, max(low, upper))
    if items is False:
        count = min(count, len(prefix))
    out: list[Any] = []
    if "contains" in schema:
        out.append(_gen(schema["contains"], ctx, depth + 1))
    attempts = 0
    while len(out) < count and attempts < count * 10 + 10:
        attempts += 1
        sub = prefix[len(out)] if len(out) < len(prefix) else items
        value = _gen(sub, ctx, depth + 1)
        if schema.get("uniqueItems") and value in out:
            continue
        out.append(value)
    return out


def _object(schema: dict[str, Any], ctx: _Ctx, depth: int) -> dict[str, Any]:
    props: dict[str, Any] = dict(schema.get("properties", {}))
    required = list(schema.get("required", []))
    out: dict[str, Any] = {}
    for name in required:
        out[name] = _gen(props.get(name, _additional(schema)), ctx, depth + 1)
    for name, sub in props.items():
        if name not in out and depth < _MAX_DEPTH and ctx.rng.random() < 0.5:
            out[name] = _gen(sub, ctx, depth + 1)
    for name, needed in schema.get("dependentRequired", {}).items():
        if name in out:
            for dep in needed:
                out.setdefault(dep, _gen(props.get(dep, _additional(schema)), ctx, depth + 1))
    extra = schema.get("additionalProperties", True)
    index = 0
    while len(out) < int(schema.get("minProperties", 0)):
        patterns = schema.get("patternProperties", {})
        if patterns:
            pattern, sub = next(iter(patterns.items()))
            key = string_matching(pattern, ctx.rng)
        elif extra is False:
            missing = [p for p in props if p not in out]
            if not missing:
                raise UnsatisfiableSchemaError("minProperties exceeds the allowed properties")
            key, sub = missing[0], props[missing[0]]
        else:
            key, sub = f"extra_{index}", extra
        index += 1
        if key not in out:
            out[key] = _gen(sub, ctx, depth + 1)
    return out


def _additional(schema: dict[str, Any]) -> Any:
    extra = schema.get("additionalProperties", True)
    return {} if extra is True else extra
