"""The model seam of the RAG steps: any callable shaped like ``Model.complete``.

Agents pass ``RunContext.complete`` (which journals every call); scripts pass a model's
``complete``. Both fit ``CompleteFn``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from kforge.errors import ModelError, ModelOutputError, ScriptedModelError
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec

__all__ = ["CompleteFn", "ask_structured", "is_recoverable"]


class CompleteFn(Protocol):
    def __call__(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> Awaitable[ModelResponse]: ...


def is_recoverable(exc: BaseException) -> bool:
    """A model failure a RAG step may work around (timeout, bad output, unavailable server).

    A scripted model's complaint is a broken test, not a failure to work around.
    """
    return isinstance(exc, ModelError) and not isinstance(exc, ScriptedModelError)


async def ask_structured(
    complete: CompleteFn,
    messages: Sequence[Message],
    schema: dict[str, Any],
    settings: ModelSettings | None = None,
    *,
    what: str,
) -> dict[str, Any]:
    """One structured call; the JSON object the model returned, checked against ``schema``.

    Raises ModelOutputError naming ``what`` was asked for when the reply does not fit.
    """
    import jsonschema

    response = await complete(messages, settings, output_schema=schema)
    value = response.parsed
    if value is None and response.text.strip():
        from kforge.llm.structured import extract_json

        try:
            value = extract_json(response.text)
        except ValueError:
            value = None
    if not isinstance(value, dict):
        raise ModelOutputError(
            f"{what}: the model returned no JSON object (got {response.text[:120]!r}); "
            "use a model that supports structured output"
        )
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=str)
    if errors:
        path = "/".join(str(p) for p in errors[0].path) or "(root)"
        raise ModelOutputError(
            f"{what}: the model's JSON breaks the schema at {path}: {errors[0].message}"
        )
    return value
