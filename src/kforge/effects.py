"""How an effect is journaled: the frames that record it, and how its value is read back.

``RunContext.step`` runs an effect once and returns the recorded value when its step is
re-executed. A plain ``step(name, fn)`` records the value as the data event ``name``; an
``Effect`` says how another kind of effect is recorded (a tool call as a call frame and a result
frame, a compaction decided by the state of the context) so that every effect goes through the
same journal. A call's own values (its start frame, its arguments) come with the call, so the
``Effect`` of a tool call is built once, not per call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from kforge.errors import ValidationError
from kforge.frames import DataEvent, Frame
from kforge.jsoncodec import dumps, loads, not_json

__all__ = ["Effect", "data_step"]

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, slots=True)
class Effect(Generic[T]):
    """One journaled effect: ``RunContext.step(effect, fn)`` runs ``fn`` at most once."""

    name: str
    """What the effect is, for error messages."""
    record: Callable[[T], Frame] | None
    """The frame that records ``fn``'s value; None when the value is not recorded and a
    re-executed step runs ``fn`` again (its own model and tool calls come from the log)."""
    restore: Callable[[Frame], T] | None = None
    """The value held by a frame ``record`` made (read on replay)."""
    matches: Callable[[Frame], bool] | None = None
    """True for a frame ``record`` made: on replay such a frame next in the log is the value."""
    starts: bool = False
    """The first argument after ``fn`` is a frame written before ``fn`` runs (a tool call's call
    frame), so the log shows the effect began; ``fn`` gets the start as recorded (its run id
    and seq set) in its place, or None when the log is an earlier version's (see ``earlier``)."""
    repeatable: bool = True
    """False for an effect that must not happen twice: its start commits before ``fn`` runs,
    and a start recorded without its result is not run again but answered by ``unknown``."""
    unknown: Callable[[Frame], T] | None = None
    """The value recorded for a start without a result when the effect is not repeatable."""
    when: Callable[[], bool] | None = None
    """The effect happens only when this says so; the decision is journaled by its start
    (``starts``): on replay it happened exactly when a start of that type is next in the log,
    and nothing is written when it did not happen."""
    earlier: Callable[[Frame], bool] | None = None
    """Frames an earlier version wrote where the start is now: such a frame next in the log
    means the effect happened, and is left for ``fn`` to replay."""
    durable: bool = True
    """The record commits before ``step`` returns, so a kill after it never repeats ``fn``."""
    reads_back: bool = False
    """The first execution too returns the value read back from the record (not ``fn``'s own),
    so both executions see the same thing (a tuple comes back as a list)."""


@lru_cache(maxsize=512)
def data_step(name: str) -> Effect[Any]:
    """The effect ``RunContext.step(name, fn)`` records: ``fn``'s JSON value as the data event
    ``name``. An object is the event's payload as it is; any other value (and an object whose
    only key is ``value``) is held as ``{"value": ...}``, so the payload reads as what it is
    and each payload reads back as exactly one value."""

    def record(value: Any) -> Frame:
        return DataEvent(name=name, payload=_payload(name, value))

    return Effect(name=name, record=record, restore=_value, matches=_named(name), reads_back=True)


def _named(name: str) -> Callable[[Frame], bool]:
    def matches(frame: Frame) -> bool:
        return isinstance(frame, DataEvent) and frame.name == name

    return matches


def _payload(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping) and not isinstance(value, dict):
        value = dict(value)
    found = not_json(value)
    if found is not None:
        at = f" at {found[0]}" if found[0] else ""
        raise ValidationError(
            f"step '{name}' returned {found[1]}{at}, which JSON cannot record, so a re-executed "
            "step would see something else; return strings, finite numbers, booleans, None, "
            "lists and dicts with string keys"
        )
    if isinstance(value, dict) and value.keys() != {"value"}:
        payload: dict[str, Any] = loads(dumps(value))
        return payload
    wrapped: dict[str, Any] = loads(dumps({"value": value}))
    return wrapped


def _value(frame: Frame) -> Any:
    assert isinstance(frame, DataEvent)
    payload = frame.payload
    if payload.keys() == {"value"}:
        return payload["value"]
    return dict(payload)
