"""Answers to a run's pending interaction, checked against what the interaction accepts before
anything is recorded: an answer that would fail the run later is refused at the door."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kforge.errors import ValidationError
from kforge.frames import InteractionAnswered, InteractionRequested, frame_from_dict
from kforge.jsoncodec import dumps, loads
from kforge.store.base import RunRecord

__all__ = ["answer_schema", "answered", "normalize_answer"]

_TEXT_FIELDS = ("text", "comment", "reason")


def answer_schema(request: InteractionRequested) -> dict[str, Any]:
    """The JSON Schema an answer to ``request`` must meet: ``action`` one of its options,
    ``modifications`` an object, text fields strings, plus any ``answer_schema`` the asking
    code put in the request's payload."""
    properties: dict[str, Any] = {name: {"type": "string"} for name in _TEXT_FIELDS}
    properties["modifications"] = {"type": "object"}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if request.options:
        properties["action"] = {"enum": list(request.options)}
        schema["required"] = ["action"]
    extra = request.payload.get("answer_schema")
    if isinstance(extra, dict):
        schema = {"allOf": [schema, extra]}
    return schema


def normalize_answer(request: InteractionRequested, answer: Any) -> dict[str, Any]:
    """Turn a user's answer into the dict agent code receives, checking it against
    :func:`answer_schema`; ValidationError names the field and the rule."""
    if answer is None:
        raise ValidationError(
            f"run is waiting for an answer to: {request.prompt!r}"
            + (f" (options: {', '.join(request.options)})" if request.options else "")
        )
    if isinstance(answer, str):
        answer = {"action": answer} if answer in request.options else {"text": answer}
        if request.options and "action" not in answer:
            raise ValidationError(
                f"answer must be one of {', '.join(request.options)} (got {answer['text']!r})"
            )
    if not isinstance(answer, dict):
        raise ValidationError(
            f"an answer must be a string or an object (got {type(answer).__name__})"
        )
    action = answer.get("action")
    if request.options and action not in request.options:
        raise ValidationError(
            f"answer 'action' must be one of {', '.join(request.options)} (got {action!r})"
        )
    try:
        dumps(answer)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"an answer must be JSON ({exc})") from None
    if isinstance(request.payload.get("answer_schema"), dict):
        _check_schema(answer, answer_schema(request))
    else:
        _check_fields(answer)  # the same rules as the schema, without building its errors
    if action == "modify":
        _check_modifications(request, answer.get("modifications"))
    return dict(answer)


def _check_modifications(request: InteractionRequested, modifications: Any) -> None:
    """A 'modify' answer carries only the keys the checkpoint lists in ``modify_keys``."""
    allowed = request.payload.get("modify_keys")
    if not isinstance(allowed, dict):
        return  # the agent lists none: it reads what it knows
    if not isinstance(modifications, dict) or not modifications:
        raise ValidationError(
            "a 'modify' answer needs 'modifications', an object with any of: "
            + (", ".join(allowed) or "(none: this checkpoint cannot be modified)")
        )
    unknown = sorted(set(modifications) - set(allowed))
    if unknown:
        raise ValidationError(
            f"'modifications' has unknown key(s) {', '.join(unknown)}; allowed: "
            + ", ".join(allowed)
        )


def _check_fields(answer: dict[str, Any]) -> None:
    """The rules of :func:`answer_schema` without an asker's schema (``action`` is checked
    before): the first broken one in the order of the field names, as the schema reports."""
    for name in sorted(answer):
        value = answer[name]
        if name in _TEXT_FIELDS and not isinstance(value, str):
            raise ValidationError(f"answer '{name}' must be of type string (got {value!r:.80})")
        if name == "modifications" and not isinstance(value, dict):
            raise ValidationError(
                f"answer 'modifications' must be of type object (got {value!r:.80}); a change "
                'is answered as {"action": "modify", "modifications": {...}}'
            )


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Any:
    """One validator per schema: building one costs more than checking an answer with it."""
    import jsonschema

    return jsonschema.Draft202012Validator(loads(schema_json))


def _check_schema(answer: dict[str, Any], schema: dict[str, Any]) -> None:
    errors = sorted(_validator(dumps(schema)).iter_errors(answer), key=lambda e: list(e.path))
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.path) or "the answer"
        field = f"answer '{where}'" if error.path else where
        hint = ""
        if error.path and error.path[0] == "modifications":
            hint = '; a change is answered as {"action": "modify", "modifications": {...}}'
        raise ValidationError(f"{field} {_rule(error)} (got {error.instance!r:.80}){hint}")


def _rule(error: Any) -> str:
    if error.validator == "type":
        return f"must be of type {error.validator_value}"
    if error.validator == "enum":
        return "must be one of " + ", ".join(map(str, error.validator_value))
    return str(error.message)


def answered(run: RunRecord, answer: Any) -> tuple[InteractionRequested, InteractionAnswered]:
    """The question ``run`` waits on and the frame recording ``answer`` to it (checked)."""
    request = frame_from_dict(run.pending_interaction or {})
    assert isinstance(request, InteractionRequested)
    value = normalize_answer(request, answer)
    answered = InteractionAnswered(
        run_id=run.id, seq=run.last_seq + 1, interaction_id=request.interaction_id, answer=value
    )
    return request, answered
