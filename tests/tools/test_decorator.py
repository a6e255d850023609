"""@tool builds schemas from typed functions and docstrings, and validates with pydantic."""

from __future__ import annotations

import enum
from typing import Literal

import pytest
from pydantic import BaseModel

from kforge.errors import ToolArgumentsError, ToolDefinitionError
from kforge.tools import FunctionTool, ToolResult, tool


class Point(BaseModel):
    x: float
    y: float = 0.0


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@tool(read_only=True)
def describe(
    name: str, count: int = 1, colour: Colour = Colour.RED, where: Point | None = None
) -> str:
    """Describe a thing.

    Args:
        name: What to describe.
        count (int): How many times,
            at least once.
    """
    return f"{count} x {name} in {colour.value} at {where.x if where else '-'}"


@tool(name="mean_of")
async def mean(values: list[float], mode: Literal["arith", "geo"] = "arith") -> dict[str, float]:
    """Average numbers.

    Parameters
    ----------
    values : list of float
        The numbers.
    mode : str
        Which mean.
    """
    return {"mean": sum(values) / len(values)}


def test_schema_comes_from_signature_and_google_docstring() -> None:
    schema = describe.input_schema
    assert schema["type"] == "object" and schema["required"] == ["name"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["name"] == {"type": "string", "description": "What to describe."}
    assert props["count"]["description"] == "How many times, at least once."
    assert props["count"]["default"] == 1
    assert describe.description == "Describe a thing."
    assert describe.annotations.read_only_hint


def test_numpy_docstring_and_async_function() -> None:
    assert mean.name == "mean_of"
    assert mean.input_schema["properties"]["values"]["description"] == "The numbers."
    assert mean.input_schema["properties"]["mode"]["enum"] == ["arith", "geo"]
    assert mean.output_schema is not None and mean.output_schema["type"] == "object"


async def test_arguments_are_converted_to_python_types() -> None:
    result = await describe.execute({"name": "cup", "colour": "blue", "where": {"x": 2}})
    assert result.text == "1 x cup in blue at 2.0"


async def test_async_function_result_becomes_structured_content() -> None:
    result = await mean.execute({"values": [1, 2, 3]})
    assert result.structured_content == {"mean": 2.0}


async def test_pydantic_errors_name_the_field() -> None:
    with pytest.raises(ToolArgumentsError, match=r"argument 'where.x'"):
        await describe.execute({"name": "cup", "where": {"x": "far"}})
    with pytest.raises(ToolArgumentsError, match="missing required argument 'name'"):
        await describe.execute({})


def test_schema_validation_agrees_with_pydantic() -> None:
    assert describe.check_arguments({"name": "a", "colour": "green"})
    assert not describe.check_arguments({"name": "a", "colour": "blue", "where": {"x": 1.5}})


def test_plain_call_still_works() -> None:
    assert describe("pen", 2) == "2 x pen in red at -"


async def test_non_dict_returns_are_wrapped() -> None:
    @tool
    def count() -> int:
        """Count."""
        return 3

    assert count.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    result = await count.execute({})
    assert result.structured_content == {"result": 3} and result.text == "3"
    assert not count.annotations.read_only_hint and count.needs_approval()


async def test_tool_result_passes_through() -> None:
    @tool(read_only=True)
    def fail() -> ToolResult:
        """Fails politely."""
        return ToolResult.error("nope", kind="x")

    assert (await fail.execute({})).error_kind == "x"


def test_var_args_are_refused() -> None:
    def bad(*items: int) -> int:
        return len(items)

    with pytest.raises(ToolDefinitionError, match=r"\*items"):
        FunctionTool(bad)
