"""BFCL function specs convert to our tool schema; expected calls validate; corrupted ones don't."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kforge.errors import ToolDefinitionError
from kforge.tools import ToolDefinition
from kforge.tools.validation import ArgumentValidator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bfcl import (
    CATEGORIES,
    concrete_arguments,
    corrupt,
    definition_from_bfcl,
    evaluate_category,
)
from loose_schemas import normalize_schema

BFCL = Path(__file__).resolve().parents[2] / ".." / "shared" / "eval" / "bfcl"
needs_data = pytest.mark.skipif(
    not (BFCL / "possible_answer").is_dir(),
    reason="BFCL data not found: expected shared/eval/bfcl beside the repository",
)

# Expected answers that contradict their own function spec (checked by hand): a Python
# expression given where an array of numbers is required, and fruit names for integer items.
KNOWN_BAD_ANSWERS = {"parallel_multiple_21", "parallel_multiple_94"}


def test_normalize_maps_python_type_names() -> None:
    schema = normalize_schema(
        {
            "type": "dict",
            "properties": {
                "x": {"type": "float", "optional": True},
                "pair": {"type": "tuple", "items": {"type": "float"}},
                "data": {"type": "any", "description": "anything"},
                "opts": {"type": "dict"},
                "name": {"type": "string", "default": None},
                "tags": {"type": "array", "items": {"type": "string"}, "enum": ["a", "b"]},
            },
            "required": ["x"],
            "optional": [],
        }
    )
    assert schema == {
        "type": "object",
        "properties": {
            "x": {"type": "number"},
            "pair": {"type": "array", "items": {"type": "number"}},
            "data": {"description": "anything"},
            "opts": {"type": "object", "properties": {}},
            "name": {"type": ["string", "null"], "default": None},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        },
        "required": ["x"],
    }


def test_unknown_type_is_refused_with_its_location() -> None:
    with pytest.raises(ToolDefinitionError, match=r"at f.x has unknown type 'complex'"):
        definition_from_bfcl(
            {"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "complex"}}}}
        )


def test_concrete_arguments_choose_first_value_and_unwrap_nested() -> None:
    possible = {
        "base": [10],
        "unit": ["", "units"],
        "omitted": [""],
        "conditions": [{"department": ["Science"], "school": ["Bluebird", "BHS"]}],
        "empty": [],
    }
    assert concrete_arguments(possible) == {
        "base": 10,
        "unit": "units",
        "conditions": {"department": "Science", "school": "Bluebird"},
        "empty": [],
    }
    assert concrete_arguments(possible, {"unit": 1, "base": 5}) == {
        "base": 10,
        "conditions": {"department": "Science", "school": "Bluebird"},
        "empty": [],
    }


def test_corruptions_are_rejected_naming_the_field() -> None:
    definition = definition_from_bfcl(
        {
            "name": "uber.ride",
            "description": "Find a ride.",
            "parameters": {
                "type": "dict",
                "required": ["loc", "type"],
                "properties": {
                    "loc": {"type": "string"},
                    "type": {"type": "string", "enum": ["plus", "comfort", "black"]},
                    "time": {"type": "integer"},
                },
            },
        }
    )
    validator = ArgumentValidator(definition.name, definition.input_schema)
    valid = {"loc": "2020 Addison Street", "type": "comfort", "time": 600}
    assert validator.problems(valid) == []
    kinds = {c.kind: c for c in corrupt(definition, valid)}
    assert set(kinds) == {"wrong_type", "missing_required", "outside_enum"}
    for corruption in kinds.values():
        message = validator.message(validator.problems(corruption.arguments))
        assert f"'{corruption.field}'" in message
    outside = kinds["outside_enum"]
    assert "must be one of plus, comfort, black" in validator.message(
        validator.problems(outside.arguments)
    )


@needs_data
@pytest.mark.parametrize("category", CATEGORIES)
def test_bfcl_category(category: str) -> None:
    report = evaluate_category(BFCL, category)
    assert report.specs > 0 and report.calls > 0
    assert report.unrepresentable == []
    assert report.specs_converted == report.specs
    invalid = {item["id"] for item in report.invalid_calls}
    assert invalid <= KNOWN_BAD_ANSWERS, report.invalid_calls
    assert report.calls_valid == report.calls - len(report.invalid_calls)
    assert report.corruptions_missed == []
    assert report.corruptions_rejected == report.corruptions
    assert report.corruptions.get("wrong_type", 0) > 0
    assert report.corruptions.get("missing_required", 0) > 0


@needs_data
def test_bfcl_definitions_round_trip_through_json() -> None:
    from bfcl import read_jsonl

    for category in CATEGORIES:
        for entry in read_jsonl(BFCL / f"BFCL_v4_{category}.json"):
            for function in entry["function"]:
                definition = definition_from_bfcl(function)
                assert ToolDefinition.from_json(definition.to_json()) == definition
