"""Argument validation against a tool's input schema (JSON Schema 2020-12), with messages that
name the field, the rule and the value received."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kforge import jsoncodec
from kforge.errors import ToolArgumentsError, ToolDefinitionError

if TYPE_CHECKING:
    import jsonschema

__all__ = [
    "ArgumentProblem",
    "ArgumentValidator",
    "check_input_schema",
    "check_tool_name",
    "load_validators",
]

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
"""MCP's rule for tool names: 1-128 letters, digits, '_', '-' or '.'."""

_TYPE_PHRASES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
_COMPARISONS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}
_MAX_LISTED = 20


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """One way the arguments break the schema."""

    path: str
    """Dotted path of the argument, ``items[2].name`` style; empty for the arguments object."""
    rule: str
    """The JSON Schema keyword that failed: ``type``, ``enum``, ``required``, ..."""
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "rule": self.rule, "message": self.message}


def check_tool_name(name: str) -> None:
    if not TOOL_NAME.match(name):
        raise ToolDefinitionError(
            f"tool name {name!r} is not allowed: use 1-128 letters, digits, '_', '-' or '.'"
        )


def check_input_schema(tool_name: str, schema: Any) -> None:
    """Refuse an input schema that is not an object schema valid under JSON Schema 2020-12."""
    import jsonschema

    if not isinstance(schema, dict):
        raise ToolDefinitionError(
            f"tool '{tool_name}': input schema must be a JSON object (got {type(schema).__name__})"
        )
    if schema.get("type") != "object":
        raise ToolDefinitionError(
            f'tool \'{tool_name}\': input schema must have "type": "object" at its root '
            f"(got {schema.get('type')!r})"
        )
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise ToolDefinitionError(
            f"tool '{tool_name}': input schema is not valid JSON Schema 2020-12 at {where}: "
            f"{exc.message}"
        ) from exc


def load_validators() -> None:
    """Import the library that validates tool arguments now, not at a run's first tool call (a
    process that starts to execute runs, such as a worker)."""
    import jsonschema  # noqa: F401


class ArgumentValidator:
    """A compiled validator for one tool's input schema."""

    def __init__(self, tool_name: str, schema: dict[str, Any]) -> None:
        self.tool_name = tool_name
        self.schema = schema
        self._surely_valid = simple_checker(schema)
        # the full validator is built when first needed: arguments of the simple kind that pass
        # the fast check never need it, nor the library (a tenth of ``kforge ask``'s start)
        self._validator: jsonschema.Draft202012Validator | None = None

    def _full(self) -> jsonschema.Draft202012Validator:
        if self._validator is None:
            import jsonschema

            self._validator = jsonschema.Draft202012Validator(
                self.schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
            )
        return self._validator

    def problems(self, arguments: Any) -> list[ArgumentProblem]:
        if self._surely_valid is not None and self._surely_valid(arguments):
            return []
        errors = sorted(
            self._full().iter_errors(arguments),
            key=lambda e: (_path(e.absolute_path), str(e.validator)),
        )
        found: list[ArgumentProblem] = []
        seen: set[tuple[str, str]] = set()
        for error in errors:
            for problem in _describe(error):
                key = (problem.path, problem.message)
                if key not in seen:
                    seen.add(key)
                    found.append(problem)
        return found

    def message(self, problems: Sequence[ArgumentProblem]) -> str:
        return f"tool '{self.tool_name}': " + "; ".join(p.message for p in problems)

    def validate(self, arguments: Any) -> None:
        """Raise ``ToolArgumentsError`` naming every problem found."""
        problems = self.problems(arguments)
        if problems:
            raise ToolArgumentsError(self.message(problems))


_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment"})
_ROOT_KEYS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "$schema"}
_EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def simple_checker(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A fast check for the schemas most tools have: an object of scalar, string-enum or free
    properties. It returns True only for arguments the full validator accepts too; False means
    "not sure" and the full validator decides (and explains). None when the schema is not of
    that simple kind."""
    if schema.get("type") != "object" or not set(schema) <= _ROOT_KEYS:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    closed = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(closed, bool):
        return None
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return None
    # per property: the exact Python types accepted, or the accepted strings of an enum;
    # None marks a property this check cannot judge (its presence defers to the validator)
    checks: dict[str, tuple[type, ...] | frozenset[str] | None] = {}
    for name, sub in properties.items():
        checks[name] = _simple_property(sub) if isinstance(sub, dict) else None

    def surely_valid(arguments: Any) -> bool:
        if type(arguments) is not dict:
            return False
        for name in required:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            if name not in checks:
                if closed is False:
                    return False
                continue
            check = checks[name]
            if check is None:
                return False
            if isinstance(check, frozenset):
                if type(value) is not str or value not in check:
                    return False
            elif type(value) not in check:
                return False
        return True

    return surely_valid


def _simple_property(sub: dict[str, Any]) -> tuple[type, ...] | frozenset[str] | None:
    keys = set(sub) - _ANNOTATIONS
    kind = sub.get("type")
    if keys == {"type"} and isinstance(kind, str) and kind in _EXACT_TYPES:
        return _EXACT_TYPES[kind]
    enum = sub.get("enum")
    if not isinstance(enum, list) or keys not in ({"enum"}, {"enum", "type"}):
        return None
    if all(type(v) is str for v in enum) and kind in (None, "string"):
        return frozenset(enum)
    return None


def _path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _value(value: Any) -> str:
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = jsoncodec.dumps(value, default=str, spaced=True)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _listing(values: Sequence[Any]) -> str:
    shown = [
        v if isinstance(v, str) else jsoncodec.dumps(v, default=str, spaced=True)
        for v in values[:_MAX_LISTED]
    ]
    more = len(values) - _MAX_LISTED
    return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def _type_phrase(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(_TYPE_PHRASES.get(str(n), str(n)) for n in names)


def _subject(path: str) -> str:
    return f"argument '{path}'" if path else "the arguments"


def _describe(error: jsonschema.ValidationError) -> list[ArgumentProblem]:
    path = _path(error.absolute_path)
    rule = str(error.validator)
    expected = error.validator_value
    got = error.instance
    subject = _subject(path)

    def one(text: str) -> list[ArgumentProblem]:
        return [ArgumentProblem(path, rule, text)]

    if rule == "required" and isinstance(got, dict):
        return [
            ArgumentProblem(
                f"{path}.{name}" if path else name,
                rule,
                f"missing required argument '{path + '.' if path else ''}{name}'",
            )
            for name in expected
            if name not in got
        ]
    if rule == "type":
        if not path:
            return one(f"arguments must be a JSON object (got {_type_phrase(_json_type(got))})")
        return one(f"{subject} must be {_type_phrase(expected)} (got {_value(got)})")
    if rule == "enum":
        return one(f"{subject} must be one of {_listing(list(expected))} (got {_value(got)})")
    if rule == "const":
        return one(f"{subject} must be {_value(expected)} (got {_value(got)})")
    if rule == "additionalProperties" and isinstance(got, dict):
        allowed = sorted((error.schema.get("properties") or {}).keys())
        hint = f" (expected: {_listing(allowed)})" if allowed else ""
        extras = [k for k in got if k not in (error.schema.get("properties") or {})]
        patterns = error.schema.get("patternProperties") or {}
        extras = [k for k in extras if not any(re.search(p, k) for p in patterns)]
        return [
            ArgumentProblem(
                f"{path}.{k}" if path else k, rule, f"unexpected argument '{_join(path, k)}'{hint}"
            )
            for k in extras
        ] or one(f"{subject} has unexpected properties{hint}")
    if rule in _COMPARISONS:
        return one(f"{subject} must be {_COMPARISONS[rule]} {expected} (got {_value(got)})")
    if rule == "multipleOf":
        return one(f"{subject} must be a multiple of {expected} (got {_value(got)})")
    if rule in ("minLength", "maxLength"):
        bound = "at least" if rule == "minLength" else "at most"
        return one(f"{subject} must be {bound} {expected} characters long (got {_value(got)})")
    if rule in ("minItems", "maxItems"):
        bound = "at least" if rule == "minItems" else "at most"
        count = len(got) if isinstance(got, list) else "?"
        return one(f"{subject} must have {bound} {expected} items (got {count})")
    if rule in ("minProperties", "maxProperties"):
        bound = "at least" if rule == "minProperties" else "at most"
        return one(f"{subject} must have {bound} {expected} entries")
    if rule == "uniqueItems":
        return one(f"{subject} must not contain duplicate items (got {_value(got)})")
    if rule == "pattern":
        return one(f"{subject} must match the pattern {expected} (got {_value(got)})")
    if rule == "format":
        return one(f"{subject} must be a valid {expected} (got {_value(got)})")
    if rule in ("anyOf", "oneOf") and isinstance(expected, list):
        types = [s.get("type") for s in expected if isinstance(s, dict)]
        if types and all(isinstance(t, str) for t in types) and len(types) == len(expected):
            return one(f"{subject} must be {_type_phrase(types)} (got {_value(got)})")
        if error.context:
            import jsonschema

            depth = len(error.absolute_path)
            # A branch that failed only on its type was the wrong branch: explain the others.
            near = [
                e
                for e in error.context
                if not (e.validator == "type" and len(e.absolute_path) == depth)
            ]
            return _describe(jsonschema.exceptions.best_match(near or error.context))
        return one(f"{subject} does not match any allowed form (got {_value(got)})")
    return one(f"{subject} is invalid ({rule}): {error.message}")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"
