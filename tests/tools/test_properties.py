"""Two rules of tools, checked for many generated cases (hypothesis).

Any valid tool definition serialized to JSON and parsed back is unchanged. Any call whose
arguments violate the schema is rejected with a message naming the field.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.tools import ToolAnnotations, ToolDefinition, ToolExample
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
def test_tool_definition_round_trips_through_json(definition: ToolDefinition) -> None:
    check_tool_name(definition.name)
    check_input_schema(definition.name, definition.input_schema)
    text = definition.to_json()
    parsed = ToolDefinition.from_json(text)
    assert parsed == definition
    assert parsed.to_json() == text


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
def test_invalid_arguments_are_rejected_naming_the_field(
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
def test_valid_arguments_are_accepted(case: tuple[dict[str, Any], Any]) -> None:
    schema, arguments = case
    assert ArgumentValidator("t", schema).problems(arguments) == []


simple_property_schemas = (
    st.sampled_from(["string", "integer", "number", "boolean", "null"]).map(lambda t: {"type": t})
    | st.lists(st.text(max_size=6), min_size=1, max_size=4).map(
        lambda values: {"type": "string", "enum": values}
    )
    | st.just({"type": "array", "items": {"type": "integer"}})
    | st.just({"type": "string", "minLength": 2})
).map(lambda sub: {**sub, "description": "d"})


@st.composite
def simple_object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(names, simple_property_schemas, max_size=4))
    required = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    closed = draw(st.sampled_from([None, True, False]))
    if closed is not None:
        schema["additionalProperties"] = closed
    return schema


def _near(sub: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the property's type and the ones most easily mistaken for it."""
    confusable = st.booleans() | st.integers(-2, 2) | st.floats(-2, 2) | st.none() | st.just("1")
    if "enum" in sub:
        return st.sampled_from(sub["enum"]) | st.text(max_size=6) | confusable
    exact = {
        "string": st.text(max_size=6),
        "integer": st.integers(),
        "number": st.floats(allow_nan=False) | st.integers(),
        "boolean": st.booleans(),
        "null": st.none(),
    }.get(sub.get("type", ""), json_values)
    return exact | confusable


@settings(max_examples=400, deadline=None)
@given(simple_object_schemas(), st.data())
def test_the_fast_check_only_accepts_what_the_full_validator_accepts(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    from kforge.tools.validation import simple_checker

    surely_valid = simple_checker(schema)
    assert surely_valid is not None
    props = sorted(schema["properties"])
    chosen = data.draw(st.lists(st.sampled_from(props), unique=True)) if props else []
    arguments: Any = {name: data.draw(_near(schema["properties"][name])) for name in chosen}
    arguments.update(data.draw(st.dictionaries(names, json_scalars, max_size=1)))
    if data.draw(st.integers(0, 9)) == 0:
        arguments = data.draw(json_values)
    validator = ArgumentValidator("t", schema)
    full = list(validator._full().iter_errors(arguments))
    if surely_valid(arguments):
        assert not full
        assert validator.problems(arguments) == []
    else:  # "not sure" is fine, but an invalid call must still be explained
        assert validator.problems(arguments) == [] or full


def test_the_fast_check_accepts_typical_valid_calls() -> None:
    from kforge.tools.validation import simple_checker

    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "mode": {"enum": ["x", "y"], "type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    check = simple_checker(schema)
    assert check is not None
    assert check({"a": 1}) and check({"a": 1, "mode": "y"})
    assert not check({"a": True}) and not check({"a": 1, "other": 2}) and not check({})
    assert simple_checker({"type": "object", "anyOf": []}) is None


TRICKY_VALUES = [True, False, 0, 1, -1, 1.0, 1.5, 0.0, "", "1", "x", None, [], {}, [1], {"a": 1}]


def test_the_fast_check_agrees_with_the_validator_on_every_tricky_scalar() -> None:
    from kforge.tools.validation import simple_checker

    for sub in [
        *({"type": t} for t in ["string", "integer", "number", "boolean", "null"]),
        {"enum": ["x", "1"]},
        {"type": "string", "enum": ["", "x"]},
    ]:
        schema = {"type": "object", "properties": {"p": sub}, "required": ["p"]}
        check = simple_checker(schema)
        assert check is not None
        validator = ArgumentValidator("t", schema)
        for value in TRICKY_VALUES:
            if check({"p": value}):
                assert validator.problems({"p": value}) == []
                assert not list(validator._full().iter_errors({"p": value})), (sub, value)
