"""Validation messages name the field, the rule and the value received."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kforge.errors import ToolArgumentsError, ToolDefinitionError
from kforge.tools.validation import ArgumentValidator, check_input_schema, check_tool_name

PLANE_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "project": {"type": "string"},
        "priority": {"type": "string", "enum": ["urgent", "high", "medium", "low", "none"]},
        "estimate": {"type": "integer", "minimum": 0, "maximum": 40},
        "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "due": {"type": "string", "format": "date"},
        "owner": {
            "type": "object",
            "properties": {"email": {"type": "string"}},
            "required": ["email"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "project"],
    "additionalProperties": False,
}


@pytest.fixture
def validator() -> ArgumentValidator:
    return ArgumentValidator("plane_create_task", PLANE_SCHEMA)


def test_enum_message_matches_the_convention(validator: ArgumentValidator) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        validator.validate({"name": "x", "project": "p", "priority": "asap"})
    assert str(info.value) == (
        "tool 'plane_create_task': argument 'priority' must be one of urgent, high, medium, "
        "low, none (got 'asap')"
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"project": "p"}, "missing required argument 'name'"),
        ({"name": 3, "project": "p"}, "argument 'name' must be a string (got 3)"),
        ({"name": "", "project": "p"}, "argument 'name' must be at least 1 characters long"),
        (
            {"name": "x", "project": "p", "estimate": 99},
            "argument 'estimate' must be <= 40 (got 99)",
        ),
        (
            {"name": "x", "project": "p", "estimate": -1},
            "argument 'estimate' must be >= 0 (got -1)",
        ),
        ({"name": "x", "project": "p", "labels": [1]}, "argument 'labels[0]' must be a string"),
        ({"name": "x", "project": "p", "labels": ["a", "b", "c"]}, "must have at most 2 items"),
        ({"name": "x", "project": "p", "due": "tomorrow"}, "argument 'due' must be a valid date"),
        ({"name": "x", "project": "p", "owner": {}}, "missing required argument 'owner.email'"),
        ({"name": "x", "project": "p", "colour": "red"}, "unexpected argument 'colour'"),
        ([1, 2], "arguments must be a JSON object (got an array)"),
    ],
)
def test_each_rule_has_a_clear_message(
    validator: ArgumentValidator, arguments: object, expected: str
) -> None:
    problems = validator.problems(arguments)
    assert problems, f"{arguments!r} should be rejected"
    assert expected in validator.message(problems)


def test_all_problems_are_reported_at_once(validator: ArgumentValidator) -> None:
    message = validator.message(validator.problems({"priority": "asap", "estimate": "x"}))
    for fragment in ("'name'", "'project'", "'priority'", "'estimate'"):
        assert fragment in message


def test_valid_arguments_pass(validator: ArgumentValidator) -> None:
    validator.validate({"name": "x", "project": "p", "priority": "low", "due": "2024-05-01"})


def test_tool_names_follow_the_mcp_rule() -> None:
    check_tool_name("math.factorial")
    for bad in ("", "has space", "x" * 129, "semi;colon"):
        with pytest.raises(ToolDefinitionError):
            check_tool_name(bad)


def test_input_schema_must_be_a_valid_object_schema() -> None:
    with pytest.raises(ToolDefinitionError, match='must have "type": "object"'):
        check_input_schema("t", {"type": "array"})
    with pytest.raises(ToolDefinitionError, match="not valid JSON Schema 2020-12"):
        check_input_schema("t", {"type": "object", "properties": {"a": {"type": "strin"}}})


def test_arguments_the_fast_check_accepts_never_load_the_schema_library() -> None:
    """``kforge ask`` checks its search tool's arguments; JSON Schema's library (a tenth of the
    command's start) is loaded only when arguments need it to explain what is wrong."""
    script = (
        "import sys\n"
        "from kforge.tools import tool\n"
        "@tool()\n"
        "def search(query: str, k: int = 5) -> str:\n"
        "    '''Search.'''\n"
        "    return query\n"
        "assert search.check_arguments({'query': 'q', 'k': 2}) == []\n"
        "print('jsonschema' in sys.modules)\n"
        "print(search.check_arguments({'query': 3})[0].message)\n"
        "print('jsonschema' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert run.stdout.splitlines() == ["False", "argument 'query' must be a string (got 3)", "True"]
