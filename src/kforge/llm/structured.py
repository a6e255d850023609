"""Structured output: JSON Schemas from Python types, and the one place a reply becomes a value.

A structured reply is a pydantic model (or any type pydantic can validate) passed as
``output_type``: ``schema_for`` derives the JSON Schema the provider constrains decoding to,
``parse_output`` turns a response into a validated value (``.parsed``, else the JSON in the text,
else ``ModelOutputError``), and ``complete_structured`` does both around one model call.
``RunContext.complete(..., output_type=...)`` is the same path for agents.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar, overload

from kforge import jsoncodec
from kforge.errors import ModelOutputError
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.prompts import prompt_text

if TYPE_CHECKING:
    from kforge.llm.base import CompleteFn, Model

__all__ = [
    "complete_structured",
    "decoder_bounds",
    "extract_json",
    "json_instructions",
    "parse_output",
    "repair_message",
    "schema_errors",
    "schema_for",
    "structured_value",
]

T = TypeVar("T")


def schema_for(output_type: Any) -> dict[str, Any]:
    """The JSON Schema of ``output_type``: a schema dict as is, else pydantic's schema of the
    type without the titles pydantic derives from names (noise in a prompt)."""
    if isinstance(output_type, dict):
        return output_type
    return _schema_of(output_type)


@lru_cache(maxsize=256)
def _schema_of(output_type: Any) -> dict[str, Any]:
    from pydantic import TypeAdapter
    from pydantic.json_schema import GenerateJsonSchema

    class _NoTitles(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

        def generate(self, schema: Any, mode: Any = "validation") -> Any:
            generated = super().generate(schema, mode=mode)
            return _untitled(generated)

    schema: dict[str, Any] = TypeAdapter(output_type).json_schema(schema_generator=_NoTitles)
    return schema


@lru_cache(maxsize=256)
def _adapter(output_type: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(output_type)


def _untitled(schema: Any) -> Any:
    """``schema`` without the ``title`` keywords of models (field titles are never set)."""
    if isinstance(schema, dict):
        return {k: _untitled_value(k, v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_untitled(item) for item in schema]
    return schema


def _untitled_value(key: str, value: Any) -> Any:
    if key in ("properties", "$defs") and isinstance(value, dict):
        return {name: _untitled(sub) for name, sub in value.items()}
    if key in ("enum", "const", "default", "examples"):
        return value
    return _untitled(value)


def decoder_bounds(**bounds: int) -> Any:
    """A pydantic ``Field`` whose bounds (``max_length``, ``min_items``, ...) go into the JSON
    Schema for constrained decoding without being enforced when the reply is validated.

    For replies whose reader was always lenient about length: a capable model that writes a
    longer reason than the schema hints at is not an error.
    """
    from pydantic import Field

    names = {
        "min_length": "minLength",
        "max_length": "maxLength",
        "min_items": "minItems",
        "max_items": "maxItems",
    }
    unknown = set(bounds) - set(names)
    if unknown:
        raise TypeError(f"decoder_bounds takes {', '.join(names)} (got {', '.join(unknown)})")
    extra: dict[str, Any] = {names[k]: v for k, v in bounds.items()}
    return Field(json_schema_extra=extra)


def extract_json(text: str) -> Any:
    """The JSON value in ``text``: the whole text, a fenced block, or the first complete value.

    Raises ``ValueError`` saying why nothing could be read.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply is empty")
    try:
        return jsoncodec.loads(stripped)
    except jsoncodec.JSONDecodeError as exc:
        first_error = exc
    if "```" in stripped:
        for block in stripped.split("```")[1::2]:
            first_line, _, rest = block.partition("\n")
            tag = first_line.strip()
            body = rest if tag and tag[0] not in "{[" else block
            try:
                return jsoncodec.loads(body.strip())
            except jsoncodec.JSONDecodeError:
                continue
    for index, char in enumerate(stripped):
        if char in "{[":
            try:
                value, _ = jsoncodec.raw_decode(stripped, index)
            except jsoncodec.JSONDecodeError:
                continue
            return value
    raise ValueError(
        f"the reply is not JSON ({first_error.msg} at line {first_error.lineno} "
        f"column {first_error.colno})"
    )


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import jsonschema

    schema = jsoncodec.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def schema_errors(value: Any, schema: dict[str, Any], *, limit: int = 5) -> list[str]:
    """Why ``value`` does not match ``schema``: one line per problem, naming the path; empty if valid."""
    validator = _validator(jsoncodec.dumps(schema, sort_keys=True))
    errors = sorted(
        validator.iter_errors(value), key=lambda e: (len(e.path), list(map(str, e.path)))
    )
    lines = []
    for err in errors[:limit]:
        path = "/".join(str(p) for p in err.path) or "(root)"
        lines.append(f"at {path}: {err.message}")
    return lines


def json_instructions(schema: dict[str, Any]) -> str:
    """What to tell a model that cannot be constrained to a schema."""
    return prompt_text("JSON_INSTRUCTIONS", schema=jsoncodec.dumps(schema))


def repair_message(problems: Sequence[str] | str) -> Message:
    """The user turn that asks a model to fix a reply that broke the schema."""
    text = problems if isinstance(problems, str) else "; ".join(problems)
    return Message.user(prompt_text("REPAIR_REQUEST", problems=text))


def structured_value(response: ModelResponse, what: str = "structured output") -> Any:
    """The JSON value of a structured reply: ``parsed`` when the provider decoded it, else the
    JSON in the text. Raises ``ModelOutputError`` naming ``what`` when there is none."""
    if response.parsed is not None:
        return response.parsed
    try:
        return extract_json(response.text)
    except ValueError as exc:
        raise ModelOutputError(f"{what} is not JSON: {exc}") from exc


@overload
def parse_output(output_type: type[T], value: ModelResponse | Any, what: str = ...) -> T: ...
@overload
def parse_output(output_type: Any, value: ModelResponse | Any, what: str = ...) -> Any: ...
def parse_output(output_type: Any, value: ModelResponse | Any, what: str = "") -> Any:
    """Validate a structured response (or its ``parsed`` value) into ``output_type``.

    Raises ``ModelOutputError`` naming ``what`` was asked for, the field and the rule that failed.
    """
    prefix = f"{what}: " if what else ""
    raw = (
        structured_value(value, f"{prefix}structured output")
        if isinstance(value, ModelResponse)
        else value
    )
    if isinstance(output_type, dict):
        problems = schema_errors(raw, output_type)
        if problems:
            raise ModelOutputError(
                f"{prefix}structured output does not match the schema " + "; ".join(problems)
            )
        return raw
    from pydantic import ValidationError as PydanticValidationError

    try:
        return _adapter(output_type).validate_python(raw)
    except PydanticValidationError as exc:
        details = "; ".join(
            f"{'/'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        name = getattr(output_type, "__name__", str(output_type))
        raise ModelOutputError(
            f"{prefix}structured output is not a valid {name}: {details}"
        ) from exc


@overload
async def complete_structured(
    complete: Model | CompleteFn,
    messages: Sequence[Message],
    output_type: type[T],
    settings: ModelSettings | None = None,
    *,
    attempts: int = 2,
    what: str = "",
) -> T: ...
@overload
async def complete_structured(
    complete: Model | CompleteFn,
    messages: Sequence[Message],
    output_type: Any,
    settings: ModelSettings | None = None,
    *,
    attempts: int = 2,
    what: str = "",
) -> Any: ...
async def complete_structured(
    complete: Model | CompleteFn,
    messages: Sequence[Message],
    output_type: Any,
    settings: ModelSettings | None = None,
    *,
    attempts: int = 2,
    what: str = "",
) -> Any:
    """Ask a model (or any ``CompleteFn``, such as a journaled one) for output of
    ``output_type`` and return it validated.

    The provider enforces the JSON Schema; validation rules the schema cannot express
    (pydantic validators) get up to ``attempts`` tries in total, each told what was wrong.
    """
    call: CompleteFn = complete.complete if hasattr(complete, "complete") else complete
    schema = schema_for(output_type)
    history = list(messages)
    last_error: ModelOutputError | None = None
    for _ in range(max(1, attempts)):
        response = await call(history, settings, output_schema=schema)
        try:
            return parse_output(output_type, response, what)
        except ModelOutputError as exc:
            last_error = exc
            history += [Message.assistant(response.text), repair_message(str(exc))]
    assert last_error is not None
    raise last_error
