"""JSON Schema to a llama.cpp grammar whose every sentence is bounded and parses as JSON.

Extends llama-cpp-python's converter: strings and arrays without a maximum get one, so a small
model cannot ramble until it runs out of tokens; bounded integers and numbers are enforced;
free-form values nest at most ``ANY_DEPTH`` levels; nullable type lists keep their keywords.
Output is still validated against the original schema afterwards.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kforge import jsoncodec

__all__ = ["ANY_DEPTH", "ARRAY_MAX_ITEMS", "STRING_MAX_CHARS", "schema_to_gbnf"]

STRING_MAX_CHARS = 400
"""Longest string the grammar allows where the schema sets no maxLength."""
ARRAY_MAX_ITEMS = 8
"""Most items the grammar allows where the schema sets no maxItems."""
ANY_DEPTH = 2
"""Nesting depth of values whose schema says nothing about them."""
_ENUMERABLE_RANGE = 512
_GRAMMAR_FORMATS = {
    "date",
    "time",
    "date-time",
    "uuid",
    "uuid1",
    "uuid2",
    "uuid3",
    "uuid4",
    "uuid5",
}
"""String formats llama-cpp-python turns into grammar rules; other formats are plain strings."""
_JSON_CHAR = r'[^"\\\x7F\x00-\x1F] | [\\] (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
"""A character of a JSON string: no raw control characters (llama-cpp-python's rule allows them)."""


@lru_cache(maxsize=128)
def _cached(schema_json: str) -> str:
    from llama_cpp import llama_grammar

    converter = _make_converter(llama_grammar)
    schema = converter.resolve_refs(jsoncodec.loads(schema_json), "input")
    converter.visit(schema, "")
    return str(converter.format_grammar())


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar for ``schema`` (cached per schema)."""
    return _cached(jsoncodec.dumps(schema))


def _make_converter(g: Any) -> Any:
    base = g.SchemaConverter

    class BoundedConverter(base):  # type: ignore[misc,valid-type]
        def visit(self, schema: Any, name: str) -> str:
            rule_name = name + "-" if name in g.RESERVED_NAMES else name or "root"
            if schema is True or (isinstance(schema, dict) and _is_any(schema)):
                return str(self._add_rule(rule_name, self._any_rule(ANY_DEPTH)))
            if not isinstance(schema, dict):
                return str(super().visit(schema, name))
            kind = schema.get("type")
            if isinstance(kind, list) and not any(
                k in schema for k in ("enum", "const", "anyOf", "oneOf")
            ):
                options = [{**schema, "type": t} for t in kind]
                return str(self._add_rule(rule_name, self._generate_union_rule(name, options)))
            if "allOf" in schema and len(schema["allOf"]) == 1:
                only = schema["allOf"][0]
                if isinstance(only, dict) and "$ref" in only:
                    only = self._refs[only["$ref"]]
                rest = {k: v for k, v in schema.items() if k != "allOf"}
                return str(self.visit({**only, **rest}, name))
            if _is_free_object(schema):
                return str(self._add_rule(rule_name, self._object_rule(ANY_DEPTH)))
            if (
                kind == "string"
                and not ({"pattern", "enum", "const"} & schema.keys())
                and schema.get("format") not in _GRAMMAR_FORMATS
            ):
                low = int(schema.get("minLength", 0))
                high = int(schema.get("maxLength", max(low, STRING_MAX_CHARS)))
                char = self._add_primitive("char", g.PRIMITIVE_RULES["char"])
                return str(self._add_rule(rule_name, rf'"\"" {char}{{{low},{high}}} "\"" space'))
            if (
                kind == "array"
                and isinstance(schema.get("items", {}), dict)
                and "prefixItems" not in schema
            ):
                item = self.visit(schema.get("items", {}), f"{name}{'-' if name else ''}item")
                low = int(schema.get("minItems", 0))
                high = int(schema.get("maxItems", max(low, ARRAY_MAX_ITEMS)))
                return str(self._add_rule(rule_name, _list_rule(item, low, high, "[", "]")))
            if kind in ("integer", "number") and not ({"enum", "const"} & schema.keys()):
                rule = self._number_rule(schema, integer=kind == "integer")
                if rule is not None:
                    return str(self._add_rule(rule_name, rule))
            return str(super().visit(_tightened(schema), name))

        def _add_primitive(self, name: str, rule: Any) -> str:
            if name == "char":
                rule = g.BuiltinRule(_JSON_CHAR, [])
            return str(super()._add_primitive(name, rule))

        def _string_rule(self) -> str:
            char = self._add_primitive("char", g.PRIMITIVE_RULES["char"])
            return str(
                self._add_rule("kf-string", rf'"\"" {char}{{0,{STRING_MAX_CHARS}}} "\"" space')
            )

        def _leaf_rule(self) -> str:
            parts = [self._string_rule()]
            parts += [
                self._add_primitive(p, g.PRIMITIVE_RULES[p]) for p in ("number", "boolean", "null")
            ]
            return str(self._add_rule("kf-leaf", " | ".join(parts)))

        def _object_rule(self, depth: int) -> str:
            value = self._any_rule(depth - 1) if depth > 1 else self._leaf_rule()
            pair = self._add_rule(f"kf-pair-{depth}", f'{self._string_rule()} ":" space {value}')
            return str(self._add_rule(f"kf-object-{depth}", _list_rule(pair, 0, 8, "{", "}")))

        def _array_rule(self, depth: int) -> str:
            value = self._any_rule(depth - 1) if depth > 1 else self._leaf_rule()
            return str(self._add_rule(f"kf-array-{depth}", _list_rule(value, 0, 8, "[", "]")))

        def _any_rule(self, depth: int) -> str:
            if depth <= 0:
                return self._leaf_rule()
            alternatives = (
                f"{self._leaf_rule()} | {self._object_rule(depth)} | {self._array_rule(depth)}"
            )
            return str(self._add_rule(f"kf-any-{depth}", alternatives))

        def _number_rule(self, schema: dict[str, Any], *, integer: bool) -> str | None:
            low, high = schema.get("minimum"), schema.get("maximum")
            if (
                "exclusiveMinimum" in schema
                or "exclusiveMaximum" in schema
                or "multipleOf" in schema
            ):
                return None
            if isinstance(low, (int, float)) and isinstance(high, (int, float)):
                return _range_rule(low, high, integer=integer, g=g)
            if isinstance(low, (int, float)) and low >= 0 and high is None:
                self._add_primitive("integral-part", g.PRIMITIVE_RULES["integral-part"])
                if integer:
                    return "integral-part space"
                self._add_primitive("decimal-part", g.PRIMITIVE_RULES["decimal-part"])
                return 'integral-part ("." decimal-part)? space'
            return None

    return BoundedConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)


def _list_rule(item: str, low: int, high: int, open_: str, close: str) -> str:
    """``open item ("," item){low-1,high-1} close`` in GBNF, with native bounded repetition."""
    if high <= 0:
        return f'"{open_}" space "{close}" space'
    rest = f'("," space {item}){{{max(0, low - 1)},{high - 1}}}'
    body = f"{item} {rest}" if low >= 1 else f"({item} {rest})?"
    return f'"{open_}" space {body} "{close}" space'


def _is_any(schema: dict[str, Any]) -> bool:
    meaningful = set(schema) - {"title", "description", "default", "examples", "$comment"}
    return not meaningful


def _is_free_object(schema: dict[str, Any]) -> bool:
    if schema.get("type") != "object" or "properties" in schema:
        return False
    extra = schema.get("additionalProperties")
    return extra is None or extra is True


def _tightened(schema: dict[str, Any]) -> dict[str, Any]:
    out = dict(schema)
    if "properties" in schema and schema.get("additionalProperties") is True:
        out["additionalProperties"] = False
    if isinstance(schema.get("pattern"), str):
        pattern = schema["pattern"]
        if not (pattern.startswith("^") and pattern.endswith("$")):
            out["pattern"] = f"^({pattern.lstrip('^').rstrip('$')})$"
    return out


def _range_rule(low: float, high: float, *, integer: bool, g: Any) -> str | None:
    """Integers in [low, high] as an alternation; decimals between integral bounds likewise."""
    import math

    lo, hi = math.ceil(low), math.floor(high)
    if hi < lo or hi - lo > _ENUMERABLE_RANGE:
        return None
    ints = " | ".join(f'"{n}"' for n in range(lo, hi + 1))
    if integer:
        return f"({ints}) space"
    if lo != low or hi != high or lo < 0 or hi == lo:
        return None
    below = " | ".join(f'"{n}"' for n in range(lo, hi))
    fraction = g._build_repetition("[0-9]", 1, 6)
    zeros = g._build_repetition('"0"', 1, 6)
    return f'(({below}) ("." {fraction})? | "{hi}" ("." {zeros})?) space'
