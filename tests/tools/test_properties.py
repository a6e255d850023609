"""Seed 001 Properties 4 and 5 as property tests.

Property 4: any valid tool definition serialized to JSON and parsed back is unchanged.
Property 5: any call whose arguments violate the schema is rejected with a message naming the field.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.tools import (
    ParsedToolCall,
    ToolAnnotations,
    ToolDefinition,
    ToolExample,
    parse_tool_call,
    serialize_tool_call,
)
from kforge.tools.validation import ArgumentValidator, check_input_schema, check_tool_name

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
tool_names = st.from_regex(r"[A-Za-z0-9_.\-]{1,40}", fullmatch=True)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
SCALAR_TYPES = ["string", "integer", "number", "boolean"]


def scalar_schemas() -> st.SearchStrategy[dict[str, Any]]:
    plain = st.sampled_from(SCALAR_TYPES).map(lambda t: {"type": t})
    enums = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=5, unique=True).map(
        lambda values: {"type": "string", "enum": values}
    )
    described = st.tuples(plain | enums, st.text(max_size=30)).map(
        lambda pair: {**pair[0], "description": pair[1]}
    )
    return plain | enums | described


def object_schemas(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    children = scalar_schemas()
    if depth > 0:
        children = (
            children
            | object_schemas(depth - 1)
            | scalar_schemas().map(lambda s: {"type": "array", "items": s})
        )

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(names, children, min_size=1, max_size=5))
        required = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        return schema

    return build()


annotations = st.builds(
    ToolAnnotations,
    title=st.none() | st.text(max_size=20),
    read_only_hint=st.booleans(),
    destructive_hint=st.booleans(),
    idempotent_hint=st.booleans(),
    open_world_hint=st.booleans(),
)
definitions = st.builds(
    ToolDefinition,
    name=tool_names,
    description=st.text(max_size=80),
    input_schema=object_schemas(),
    output_schema=st.none() | object_schemas(1),
    annotations=annotations,
    examples=st.lists(
        st.builds(
            ToolExample,
            input=st.dictionaries(names, json_values, max_size=3),
            description=st.text(max_size=20),
        ),
        max_size=2,
    ).map(tuple),
)


@settings(max_examples=150)
@given(definitions)
def test_property_4_tool_definition_round_trips_through_json(definition: ToolDefinition) -> None:
    check_tool_name(definition.name)
    check_input_schema(definition.name, definition.input_schema)
    text = definition.to_json()
    parsed = ToolDefinition.from_json(text)
    assert parsed == definition
    assert parsed.to_json() == text


@settings(max_examples=150)
@given(tool_names, st.dictionaries(names, json_values, max_size=4), st.text(max_size=40))
def test_property_4_tool_call_text_round_trips(
    name: str, arguments: dict[str, Any], why: str
) -> None:
    call = ParsedToolCall(name, arguments, why.strip())
    assert parse_tool_call(serialize_tool_call(call)) == call


def valid_value(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if kind == "string":
        return st.text(max_size=10)
    if kind == "integer":
        return st.integers()
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(valid_value(schema["items"]), max_size=3)
    props = schema["properties"]
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {k: valid_value(v) for k, v in props.items() if k in required},
        optional={k: valid_value(v) for k, v in props.items() if k not in required},
    )


WRONG = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "yes",
    "array": {"not": "a list"},
    "object": ["not", "an", "object"],
}


@st.composite
def invalid_calls(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    """A schema, arguments that break it in one place, the broken field's path, and the rule."""
    schema = draw(object_schemas(1))
    arguments = draw(valid_value(schema))
    field = draw(st.sampled_from(sorted(schema["properties"])))
    sub = schema["properties"][field]
    modes = ["type"]
    if field in schema.get("required", []):
        modes.append("required")
    if "enum" in sub:
        modes.append("enum")
    mode = draw(st.sampled_from(modes))
    if mode == "required":
        arguments.pop(field, None)
    elif mode == "enum":
        arguments[field] = "".join(sub["enum"]) + "-not-allowed"
    else:
        arguments[field] = WRONG[sub["type"]]
    return schema, arguments, field, mode


@settings(max_examples=300)
@given(invalid_calls())
def test_property_5_invalid_arguments_are_rejected_naming_the_field(
    case: tuple[dict[str, Any], dict[str, Any], str, str],
) -> None:
    schema, arguments, field, mode = case
    validator = ArgumentValidator("t", schema)
    problems = validator.problems(arguments)
    assert problems, f"{arguments!r} should break {schema!r}"
    ours = [p for p in problems if p.path == field]
    assert ours, f"no problem reported for '{field}': {problems}"
    assert any(p.rule == mode for p in ours)
    message = validator.message(problems)
    assert f"'{field}'" in message and message.startswith("tool 't': ")


@settings(max_examples=150)
@given(object_schemas().flatmap(lambda s: st.tuples(st.just(s), valid_value(s))))
def test_property_5_valid_arguments_are_accepted(case: tuple[dict[str, Any], Any]) -> None:
    schema, arguments = case
    assert ArgumentValidator("t", schema).problems(arguments) == []
