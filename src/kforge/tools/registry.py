"""ToolRegistry: the tools an agent may call, by unique name."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kforge.errors import DuplicateToolError, UnknownToolError
from kforge.llm.types import ToolSpec
from kforge.tools.base import Tool
from kforge.tools.validation import check_input_schema, check_tool_name

__all__ = ["ToolRegistry"]


class ToolRegistry:
    """Tools by name, in registration order. Registering checks the name and the input schema."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> Tool:
        name = tool.name
        if name in self._tools:
            raise DuplicateToolError(
                f"a tool named '{name}' is already registered; give the new tool another name "
                "or unregister the old one first"
            )
        check_tool_name(name)
        check_input_schema(name, tool.input_schema)
        self._tools[name] = tool
        return tool

    def unregister(self, name: str) -> Tool:
        return self._tools.pop(name, None) or self._unknown(name)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def require(self, name: str) -> Tool:
        """The tool called ``name``; ``UnknownToolError`` listing the available ones otherwise."""
        tool = self._tools.get(name)
        return tool if tool is not None else self._unknown(name)

    def _unknown(self, name: str) -> Tool:
        available = ", ".join(self._tools) or "none"
        raise UnknownToolError(f"unknown tool '{name}'; available tools: {available}")

    def list_tools(self) -> list[Tool]:
        return list(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry with only ``names`` (e.g. the tools of one phase)."""
        return ToolRegistry(self.require(name) for name in names)

    def to_llm_schemas(self) -> list[dict[str, Any]]:
        return [tool.to_llm_schema() for tool in self._tools.values()]

    def specs(self) -> list[ToolSpec]:
        return [tool.to_spec() for tool in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({', '.join(self._tools)})"
