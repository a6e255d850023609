"""ToolRegistry refuses duplicates and bad definitions, and lists schemas for the model."""

from __future__ import annotations

import pytest

from kforge.errors import DuplicateToolError, ToolDefinitionError, UnknownToolError
from kforge.tools import DefinedTool, ToolDefinition, ToolRegistry, ToolResult, tool


@tool(read_only=True)
def ping() -> str:
    """Answer pong."""
    return "pong"


async def _echo(arguments: dict[str, object], context: object) -> ToolResult:
    return ToolResult.success(str(arguments))


def test_register_list_and_schemas() -> None:
    registry = ToolRegistry([ping])
    assert registry.names() == ["ping"] and "ping" in registry and len(registry) == 1
    assert registry.to_llm_schemas() == [
        {"name": "ping", "description": "Answer pong.", "input_schema": ping.input_schema}
    ]
    (spec,) = registry.specs()
    assert spec.name == "ping" and spec.input_schema == ping.input_schema


def test_duplicate_name_is_refused() -> None:
    registry = ToolRegistry([ping])
    with pytest.raises(DuplicateToolError, match="already registered"):
        registry.register(ping)


def test_unknown_name_lists_available_tools() -> None:
    with pytest.raises(UnknownToolError, match="available tools: ping"):
        ToolRegistry([ping]).require("pong")


def test_bad_definitions_are_refused() -> None:
    bad_name = DefinedTool(ToolDefinition("bad name", "", {"type": "object"}), _echo)
    with pytest.raises(ToolDefinitionError):
        ToolRegistry([bad_name])
    bad_schema = DefinedTool(ToolDefinition("t", "", {"type": "string"}), _echo)
    with pytest.raises(ToolDefinitionError):
        ToolRegistry([bad_schema])


def test_subset_keeps_only_named_tools() -> None:
    other = DefinedTool(ToolDefinition("other", "", {"type": "object"}), _echo)
    registry = ToolRegistry([ping, other])
    assert registry.subset(["other"]).names() == ["other"]
    assert registry.unregister("ping") is ping and registry.names() == ["other"]
