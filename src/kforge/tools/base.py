"""The Tool contract, aligned with MCP's: name, description, schemas, annotations, execute."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any

from kforge.llm.types import ToolSpec
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.definition import ToolDefinition, ToolExample
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext
from kforge.tools.validation import ArgumentProblem, ArgumentValidator

__all__ = ["DefinedTool", "Tool", "ToolHandler"]

ToolHandler = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]
"""An async function that runs a defined tool."""


class Tool(ABC):
    """A callable capability an agent can use.

    Subclasses give ``name``, ``description``, ``input_schema`` and ``execute``; the rest has
    defaults. ``execute`` returns a ``ToolResult`` for expected failures and may raise for
    unexpected ones: the execution wrapper turns exceptions into error results.
    """

    timeout_s: float = 60.0
    """Seconds one call may take before it becomes a timeout error."""
    requires_approval: bool | None = None
    """True/False to force; None asks people only when the annotations say destructive."""
    examples: tuple[ToolExample, ...] = ()

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    @abstractmethod
    def description(self) -> str: ...

    @property
    @abstractmethod
    def input_schema(self) -> dict[str, Any]:
        """JSON Schema (2020-12) of the arguments object."""

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """JSON Schema of ``structured_content`` on success, when the tool promises one."""
        return None

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations()

    @abstractmethod
    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult: ...

    @property
    def runs_inline(self) -> bool:
        """Whether the next call runs on the caller's thread without waiting for anything: no
        timeout could stop it, so none is set (see ``kforge.tools.threads.Placement``)."""
        return False

    # -- derived --------------------------------------------------------------------------

    def needs_approval(self) -> bool:
        if self.requires_approval is not None:
            return self.requires_approval
        return self.annotations.is_destructive

    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
            examples=self.examples,
        )

    def to_llm_schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def to_spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description, input_schema=self.input_schema
        )

    @property
    def validator(self) -> ArgumentValidator:
        """The compiled validator of the current input schema (compiled once per schema)."""
        schema = self.input_schema
        cached: ArgumentValidator | None = getattr(self, "_kforge_validator", None)
        if cached is None or cached.schema != schema:
            cached = ArgumentValidator(self.name, schema)
            self._kforge_validator = cached
        return cached

    def check_arguments(self, arguments: Any) -> list[ArgumentProblem]:
        return self.validator.problems(arguments)

    def validate(self, arguments: Any) -> None:
        """Raise ``ToolArgumentsError`` when ``arguments`` break the input schema."""
        self.validator.validate(arguments)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class DefinedTool(Tool):
    """A tool built from a ``ToolDefinition`` and an async handler.

    Handy for tools whose schema comes from elsewhere (MCP, a benchmark, a config file).
    """

    def __init__(
        self,
        definition: ToolDefinition,
        handler: ToolHandler,
        *,
        timeout_s: float | None = None,
    ) -> None:
        self._definition = definition
        self._handler = handler
        if timeout_s is not None:
            self.timeout_s = timeout_s

    @property
    def name(self) -> str:
        return self._definition.name

    @property
    def description(self) -> str:
        return self._definition.description

    @property
    def input_schema(self) -> dict[str, Any]:
        return self._definition.input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._definition.output_schema

    @property
    def annotations(self) -> ToolAnnotations:
        return self._definition.annotations

    def definition(self) -> ToolDefinition:
        return self._definition

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        return await self._handler(arguments, context or ToolContext())
