"""``@tool``: turn a typed Python function (sync or async) into a Tool.

The input schema comes from the signature and the docstring's parameter docs; arguments are
validated and converted with pydantic before the function runs.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, overload

from kforge import jsoncodec
from kforge.errors import ToolArgumentsError, ToolDefinitionError
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.definition import ToolExample
from kforge.tools.docstrings import parse_docstring
from kforge.tools.result import ToolResult
from kforge.tools.threads import Placement, run_placed
from kforge.tools.tool_context import ToolContext

if TYPE_CHECKING:
    import pydantic

__all__ = ["FunctionTool", "tool"]

_PLAIN_RETURNS: tuple[Any, ...] = (str, None, type(None), ToolResult, Any, inspect.Signature.empty)


class FunctionTool(Tool):
    """A tool backed by a Python function."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        timeout_s: float | None = None,
        requires_approval: bool | None = None,
        examples: Sequence[ToolExample] = (),
    ) -> None:
        import pydantic

        self.func = func
        self._name = name or func.__name__
        doc = parse_docstring(func.__doc__)
        self._description = description or doc.description or self._name
        self._annotations = annotations or ToolAnnotations()
        if timeout_s is not None:
            self.timeout_s = timeout_s
        self.requires_approval = requires_approval
        self.examples = tuple(examples)
        self._is_async = inspect.iscoroutinefunction(func)
        self._placement = Placement(
            self._annotations.read_only_hint and not self._annotations.open_world_hint
        )

        hints = typing.get_type_hints(func, include_extras=True)
        fields: dict[str, Any] = {}
        self._context_params: list[str] = []
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolDefinitionError(
                    f"tool '{self._name}': *{param.name} / **{param.name} cannot be described by a "
                    "schema; give every argument its own named parameter"
                )
            annotation = hints.get(param.name, Any)
            if _is_context(annotation):
                self._context_params.append(param.name)
                continue
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (
                annotation,
                pydantic.Field(default, description=doc.params.get(param.name)),
            )
        self._model: type[pydantic.BaseModel] = pydantic.create_model(
            f"{self._name}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid"),
            **fields,
        )
        self._fields = tuple(self._model.model_fields)
        """The arguments' names, in order (read once: pydantic makes the mapping per access)."""
        schema = self._model.model_json_schema(schema_generator=_schema_generator())
        schema.pop("title", None)
        schema.setdefault("properties", {})
        self._input_schema = schema

        returns = hints.get("return", inspect.Signature.empty)
        self._wrap_output = False
        self._output_schema: dict[str, Any] | None = None
        if returns not in _PLAIN_RETURNS:
            out = pydantic.TypeAdapter(returns).json_schema(schema_generator=_schema_generator())
            out.pop("title", None)
            if out.get("type") != "object":
                self._wrap_output = True
                out = {"type": "object", "properties": {"result": out}, "required": ["result"]}
            self._output_schema = out
        functools.update_wrapper(self, func)

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def input_schema(self) -> dict[str, Any]:
        return self._input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._output_schema

    @property
    def annotations(self) -> ToolAnnotations:
        return self._annotations

    @property
    def runs_inline(self) -> bool:
        return not self._is_async and self._placement.inline

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (handy in tests and plain Python code)."""
        return self.func(*args, **kwargs)

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        import pydantic

        try:
            parsed = self._model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            raise ToolArgumentsError(self._pydantic_message(exc)) from exc
        kwargs = {key: getattr(parsed, key) for key in self._fields}
        for key in self._context_params:
            kwargs[key] = context or ToolContext()
        if self._is_async:
            value = await self.func(**kwargs)
        else:
            value = await run_placed(self._placement, self.func, kwargs)
        return self._to_result(value)

    def _to_result(self, value: Any) -> ToolResult:

        if isinstance(value, ToolResult):
            return value
        if value is None:
            return ToolResult.success("done")
        if isinstance(value, str) and not self._wrap_output:
            return ToolResult.success(value)
        # JSON scalars are their own JSON form; anything else goes through pydantic
        plain = (
            value
            if type(value) in _JSON_SCALARS
            else _adapter(type(value)).dump_python(value, mode="json")
        )
        structured = (
            {"result": plain} if self._wrap_output or not isinstance(plain, dict) else plain
        )
        text = plain if isinstance(plain, str) else jsoncodec.dumps(plain, spaced=True)
        return ToolResult.success(text, structured)

    def _pydantic_message(self, exc: pydantic.ValidationError) -> str:
        parts = []
        for err in exc.errors():
            loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(
                "."
            )
            got = err.get("input")
            if err["type"] == "missing":
                parts.append(f"missing required argument '{loc}'")
            elif err["type"] == "extra_forbidden":
                parts.append(f"unexpected argument '{loc}'")
            else:
                parts.append(f"argument '{loc}': {err['msg']} (got {got!r:.80})")
        return f"tool '{self._name}': " + "; ".join(parts)


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    return ToolContext in typing.get_args(annotation)


@functools.cache
def _schema_generator() -> type[Any]:
    from pydantic.json_schema import GenerateJsonSchema

    class _NoTitles(GenerateJsonSchema):
        """JSON Schema without the titles pydantic derives from names (noise for a model)."""

        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    return _NoTitles


@overload
def tool(func: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | None = None,
    read_only: bool = False,
    open_world: bool = False,
    timeout_s: float | None = None,
    requires_approval: bool | None = None,
    examples: Sequence[ToolExample] = (),
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | None = None,
    read_only: bool = False,
    open_world: bool = False,
    timeout_s: float | None = None,
    requires_approval: bool | None = None,
    examples: Sequence[ToolExample] = (),
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool of a function: ``@tool`` or ``@tool(read_only=True, timeout_s=10)``.

    Without ``annotations`` the tool counts as destructive (MCP's default), so the execution
    wrapper asks for approval; pass ``read_only=True`` for tools that only read.

    A sync function runs on a worker thread, so it never blocks the event loop; a read-only one
    that reaches nothing outside (no ``open_world``) moves onto the caller's thread once a few
    calls in a row were quicker than that hand-off (``kforge.tools.threads.Placement``).
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        ann = annotations
        if ann is None:
            ann = (
                ToolAnnotations.read_only(open_world=open_world)
                if read_only
                else ToolAnnotations(open_world_hint=open_world)
            )
        return FunctionTool(
            f,
            name=name,
            description=description,
            annotations=ann,
            timeout_s=timeout_s,
            requires_approval=requires_approval,
            examples=examples,
        )

    return wrap(func) if func is not None else wrap


_ADAPTERS: dict[type, Any] = {}
_JSON_SCALARS = frozenset({int, float, bool, str})
"""Exact types whose pydantic JSON form is the value itself."""


def _adapter(kind: type) -> Any:
    """One pydantic TypeAdapter per return type: building one costs more than using it."""
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        import pydantic

        adapter = _ADAPTERS[kind] = pydantic.TypeAdapter(kind)
    return adapter
