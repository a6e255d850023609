"""Structured output: JSON Schemas from Python types, lenient JSON extraction, validation, repair.

Providers use these to check (and, where the endpoint cannot constrain decoding, repair) output
against a requested schema; agents use ``schema_for`` and ``parse_output`` to work with pydantic
models, dataclasses or plain types instead of raw JSON values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from kforge.errors import ModelOutputError
from kforge.llm.types import Message, ModelResponse, ModelSettings

if TYPE_CHECKING:
    from kforge.llm.base import Model

__all__ = [
    "complete_structured",
    "extract_json",
    "json_instructions",
    "parse_output",
    "repair_message",
    "schema_errors",
    "schema_for",
]

T = TypeVar("T")


def schema_for(output_type: Any) -> dict[str, Any]:
    """The JSON Schema of ``output_type``: a schema dict as is, else pydantic's schema of the type."""
    if isinstance(output_type, dict):
        return output_type
    from pydantic import TypeAdapter

    return TypeAdapter(output_type).json_schema()


def extract_json(text: str) -> Any:
    """The JSON value in ``text``: the whole text, a fenced block, or the first complete value.

    Raises ``ValueError`` saying why nothing could be read.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply is empty")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        first_error = exc
    if "```" in stripped:
        for block in stripped.split("```")[1::2]:
            first_line, _, rest = block.partition("\n")
            tag = first_line.strip()
            body = rest if tag and tag[0] not in "{[" else block
            try:
                return json.loads(body.strip())
            except json.JSONDecodeError:
                continue
    decoder = json.JSONDecoder()
    for index, char in enumerate(stripped):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(stripped, index)
            except json.JSONDecodeError:
                continue
            return value
    raise ValueError(
        f"the reply is not JSON ({first_error.msg} at line {first_error.lineno} "
        f"column {first_error.colno})"
    )


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def schema_errors(value: Any, schema: dict[str, Any], *, limit: int = 5) -> list[str]:
    """Why ``value`` does not match ``schema``: one line per problem, naming the path; empty if valid."""
    validator = _validator(json.dumps(schema, sort_keys=True))
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
    return (
        "Reply with only a JSON value, no prose and no code fences, that matches this JSON "
        f"Schema:\n{json.dumps(schema, separators=(',', ':'))}"
    )


def repair_message(problems: Sequence[str] | str) -> Message:
    """The user turn that asks a model to fix a reply that broke the schema."""
    text = problems if isinstance(problems, str) else "; ".join(problems)
    return Message.user(
        f"Your reply was not valid: {text}. Reply again with only the corrected JSON value "
        "that matches the schema."
    )


@overload
def parse_output(output_type: type[T], value: ModelResponse | Any) -> T: ...
@overload
def parse_output(output_type: Any, value: ModelResponse | Any) -> Any: ...
def parse_output(output_type: Any, value: ModelResponse | Any) -> Any:
    """Validate a structured response (or its ``parsed`` value) into ``output_type``.

    Raises ``ModelOutputError`` naming the field and the rule that failed.
    """
    raw = value.parsed if isinstance(value, ModelResponse) else value
    if isinstance(value, ModelResponse) and raw is None and value.text:
        try:
            raw = extract_json(value.text)
        except ValueError as exc:
            raise ModelOutputError(f"structured output expected: {exc}") from exc
    if isinstance(output_type, dict):
        problems = schema_errors(raw, output_type)
        if problems:
            raise ModelOutputError(
                "structured output does not match the schema " + "; ".join(problems)
            )
        return raw
    from pydantic import TypeAdapter
    from pydantic import ValidationError as PydanticValidationError

    try:
        return TypeAdapter(output_type).validate_python(raw)
    except PydanticValidationError as exc:
        details = "; ".join(
            f"{'/'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        name = getattr(output_type, "__name__", str(output_type))
        raise ModelOutputError(f"structured output is not a valid {name}: {details}") from exc


async def complete_structured(
    model: Model,
    messages: Sequence[Message],
    output_type: type[T] | Any,
    settings: ModelSettings | None = None,
    *,
    attempts: int = 2,
) -> T:
    """Ask ``model`` for output of ``output_type`` and return it validated.

    The provider enforces the JSON Schema; validation rules the schema cannot express
    (pydantic validators) get up to ``attempts`` tries in total, each told what was wrong.
    """
    schema = schema_for(output_type)
    history = list(messages)
    last_error: ModelOutputError | None = None
    for _ in range(max(1, attempts)):
        response = await model.complete(history, settings, output_schema=schema)
        try:
            return cast(T, parse_output(output_type, response))
        except ModelOutputError as exc:
            last_error = exc
            history += [Message.assistant(response.text), repair_message(str(exc))]
    assert last_error is not None
    raise last_error
