"""Berkeley Function Calling Leaderboard (BFCL) data as kforge tool definitions and calls.

BFCL files are JSON Lines; each function spec has Python-flavoured parameter schemas, and each
expected call in ``possible_answer/`` lists the acceptable values of every argument ("" meaning
the argument may be left out). This module converts the specs, builds concrete calls from the
answers, corrupts them on purpose, and checks all of it against our validator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kforge.errors import ToolDefinitionError
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.definition import ToolDefinition
from kforge.tools.validation import (
    ArgumentProblem,
    ArgumentValidator,
    check_input_schema,
    check_tool_name,
)
from loose_schemas import normalize_schema

__all__ = [
    "CATEGORIES",
    "CategoryReport",
    "Corruption",
    "concrete_arguments",
    "corrupt",
    "definition_from_bfcl",
    "evaluate_category",
    "read_jsonl",
]

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple")

_WRONG_TYPE_VALUES: dict[str, Any] = {
    "string": 12345,
    "integer": "not-an-integer",
    "number": "not-a-number",
    "boolean": "not-a-boolean",
    "array": "not-an-array",
    "object": "not-an-object",
}


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def definition_from_bfcl(function: dict[str, Any]) -> ToolDefinition:
    """Our tool definition of one BFCL function spec (checked: name, schema validity)."""
    name = function["name"]
    check_tool_name(name)
    schema = normalize_schema(function.get("parameters") or {"type": "object"}, where=name)
    check_input_schema(name, schema)
    return ToolDefinition(
        name=name,
        description=function.get("description", ""),
        input_schema=schema,
        annotations=ToolAnnotations(),
    )


_OMIT = object()


def concrete_arguments(
    possible: dict[str, Any], choice: dict[str, int] | None = None
) -> dict[str, Any]:
    """One concrete call from BFCL acceptable values.

    By default each argument takes its first acceptable value that is not "" (an argument whose
    only acceptable value is "" is left out); ``choice`` picks another alternative by index.
    """
    arguments: dict[str, Any] = {}
    for name, values in possible.items():
        options = _alternatives(values)
        chosen = options[min((choice or {}).get(name, 0), len(options) - 1)]
        if chosen is not _OMIT:
            arguments[name] = chosen
    return arguments


def _alternatives(values: Any) -> list[Any]:
    """Acceptable values in order, "" (leave it out) last. BFCL writes ``[]`` (no alternatives)
    for an argument whose answer is the empty array."""
    if not isinstance(values, list):
        return [_unwrap(values)]
    if not values:
        return [[]]
    options = [_unwrap(v) for v in values if v != ""]
    if "" in values or not options:
        options.append(_OMIT)
    return options


def _unwrap(value: Any) -> Any:
    """Nested dicts in answers hold lists of acceptable values too; lists hold such dicts."""
    if isinstance(value, dict):
        return concrete_arguments(value)
    if isinstance(value, list):
        return [_unwrap(v) if isinstance(v, dict) else v for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Corruption:
    kind: str
    """wrong_type, missing_required or outside_enum."""
    field: str
    arguments: dict[str, Any]


def corrupt(definition: ToolDefinition, arguments: dict[str, Any]) -> list[Corruption]:
    """Deliberately broken copies of a valid call, one per applicable kind."""
    props: dict[str, Any] = definition.input_schema.get("properties", {})
    out: list[Corruption] = []
    typed = [k for k in arguments if isinstance(props.get(k, {}).get("type"), str)]
    if typed:
        name = typed[0]
        broken = dict(arguments)
        broken[name] = _WRONG_TYPE_VALUES[props[name]["type"]]
        out.append(Corruption("wrong_type", name, broken))
    required = [r for r in definition.input_schema.get("required", []) if r in arguments]
    if required:
        name = required[0]
        out.append(
            Corruption("missing_required", name, {k: v for k, v in arguments.items() if k != name})
        )
    enums = [k for k in props if isinstance(props[k].get("enum"), list) and props[k]["enum"]]
    if enums:
        name = enums[0]
        outside = "".join(str(v) for v in props[name]["enum"]) + "-not-allowed"
        out.append(Corruption("outside_enum", name, {**arguments, name: outside}))
    return out


@dataclass
class CategoryReport:
    category: str
    specs: int = 0
    specs_converted: int = 0
    unrepresentable: list[dict[str, str]] = field(default_factory=list)
    calls: int = 0
    calls_valid: int = 0
    calls_valid_with_alternative: int = 0
    """Valid only with another acceptable value than the first (the first breaks the spec)."""
    invalid_calls: list[dict[str, str]] = field(default_factory=list)
    corruptions: dict[str, int] = field(default_factory=dict)
    corruptions_rejected: dict[str, int] = field(default_factory=dict)
    corruptions_missed: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "specs": self.specs,
            "specs_converted": self.specs_converted,
            "unrepresentable": self.unrepresentable,
            "calls": self.calls,
            "calls_valid": self.calls_valid,
            "calls_valid_with_alternative": self.calls_valid_with_alternative,
            "invalid_calls": self.invalid_calls,
            "corruptions": self.corruptions,
            "corruptions_rejected": self.corruptions_rejected,
            "corruptions_missed": self.corruptions_missed,
        }


def evaluate_category(data_dir: Path, category: str) -> CategoryReport:
    """Convert every spec of ``category``, validate every expected call, and check that
    corrupted calls are rejected with a message naming the broken field."""
    report = CategoryReport(category)
    answers = {
        entry["id"]: entry["ground_truth"]
        for entry in read_jsonl(data_dir / "possible_answer" / f"BFCL_v4_{category}.json")
    }
    for entry in read_jsonl(data_dir / f"BFCL_v4_{category}.json"):
        validators: dict[str, tuple[ToolDefinition, ArgumentValidator]] = {}
        for function in entry["function"]:
            report.specs += 1
            try:
                definition = definition_from_bfcl(function)
            except ToolDefinitionError as exc:
                report.unrepresentable.append({"id": entry["id"], "reason": str(exc)})
                continue
            report.specs_converted += 1
            validators[definition.name] = (
                definition,
                ArgumentValidator(definition.name, definition.input_schema),
            )
        for expected in answers.get(entry["id"], []):
            for name, possible in expected.items():
                _check_call(report, entry["id"], name, possible, validators)
    return report


def _acceptable_call(
    validator: ArgumentValidator, possible: dict[str, Any]
) -> tuple[dict[str, Any], list[ArgumentProblem], bool]:
    """The default concrete call; when an argument's first value breaks the schema, its other
    acceptable values are tried in turn (BFCL accepts any of them)."""
    choice: dict[str, int] = {}
    arguments = concrete_arguments(possible)
    problems = validator.problems(arguments)
    first_problems = problems
    while problems:
        broken = {p.path.split(".")[0].split("[")[0] for p in problems}
        advanced = False
        for name in sorted(broken):
            if name in possible and choice.get(name, 0) + 1 < len(_alternatives(possible[name])):
                choice[name] = choice.get(name, 0) + 1
                advanced = True
        if not advanced:
            return arguments, first_problems, False
        arguments = concrete_arguments(possible, choice)
        problems = validator.problems(arguments)
    return arguments, [], bool(choice)


def _check_call(
    report: CategoryReport,
    entry_id: str,
    name: str,
    possible: dict[str, list[Any]],
    validators: dict[str, tuple[ToolDefinition, ArgumentValidator]],
) -> None:
    report.calls += 1
    if name not in validators:
        report.invalid_calls.append({"id": entry_id, "reason": f"no converted spec named '{name}'"})
        return
    definition, validator = validators[name]
    arguments, problems, alternative = _acceptable_call(validator, possible)
    if problems:
        report.invalid_calls.append({"id": entry_id, "reason": validator.message(problems)})
        return
    report.calls_valid += 1
    if alternative:
        report.calls_valid_with_alternative += 1
    for corruption in corrupt(definition, arguments):
        kind = corruption.kind
        report.corruptions[kind] = report.corruptions.get(kind, 0) + 1
        found = validator.problems(corruption.arguments)
        message = validator.message(found) if found else ""
        if found and f"'{corruption.field}'" in message:
            report.corruptions_rejected[kind] = report.corruptions_rejected.get(kind, 0) + 1
        else:
            report.corruptions_missed.append(
                {"id": entry_id, "kind": kind, "field": corruption.field, "message": message}
            )
