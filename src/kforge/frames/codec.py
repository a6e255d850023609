"""How frames become JSON and back: the stored body (no run id, seq or fields at their plain
defaults), the whole frame as a dict or text (the stream, exports), and stamping a frame with
its run id and seq. Reading goes straight from text to the frame class (``jsoncodec.loads_as``).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from kforge import jsoncodec
from kforge.frames.legacy import LEGACY_TOOL_TYPES, upgrade_legacy_frame
from kforge.frames.slots import stamper
from kforge.frames.vocabulary import Frame, frame_class

__all__ = [
    "frame_body_json",
    "frame_from_body",
    "frame_from_dict",
    "frame_from_json",
    "frame_to_dict",
    "frame_to_json",
    "stamp_made",
    "stamped",
    "unstorable_field",
]

F = TypeVar("F", bound=Frame)

_NAMES: dict[type[Frame], tuple[str, ...]] = {}
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _names(cls: type[Frame]) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _encode(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def frame_to_dict(frame: Frame) -> dict[str, Any]:
    """Every field of ``frame`` as a JSON value, after its ``type``: what the stream sends."""
    data: dict[str, Any] = {"type": frame.type}
    for name in _names(type(frame)):
        data[name] = _encode(getattr(frame, name))
    return data


def frame_to_json(frame: Frame) -> str:
    return jsoncodec.dumps(frame_to_dict(frame))


def frame_from_dict(data: dict[str, Any]) -> Frame:
    """The frame ``frame_to_dict`` made (or one in the old tool-call vocabulary, upgraded);
    ``ValueError`` naming the field that does not fit."""
    type_name = data.get("type")
    if not isinstance(type_name, str):
        raise ValueError("frame JSON has no 'type'")
    if type_name in LEGACY_TOOL_TYPES:
        data = upgrade_legacy_frame(data)
        type_name = data["type"]
    cls = frame_class(type_name)
    if cls is None:
        raise ValueError(f"unknown frame type '{type_name}'")
    return jsoncodec.convert(data, cls)


def frame_from_json(text: str) -> Frame:
    return frame_from_dict(jsoncodec.loads(text))


_set_run_id = Frame.__dict__["run_id"].__set__
_set_seq = Frame.__dict__["seq"].__set__


def frame_from_body(type_name: str, body: str | bytes, run_id: str, seq: int) -> Frame:
    """The frame a store kept as ``type_name`` and ``frame_body_json``'s text, at ``seq`` of
    ``run_id``; ``ValueError`` naming what does not fit."""
    cls = frame_class(type_name)
    if cls is None or type_name in LEGACY_TOOL_TYPES:
        data = jsoncodec.loads(body)
        data["run_id"], data["seq"], data["type"] = run_id, seq, type_name
        return frame_from_dict(data)
    frame = jsoncodec.loads_as(body, cls)
    # a frame just read is not shared yet: its run id and seq are set in place
    _set_run_id(frame, run_id)
    _set_seq(frame, seq)
    return frame


_BODIES: dict[type[Frame], Callable[[Any], dict[str, Any]]] = {}
"""Each frame class's stored body as a function of a frame (``_body_of``)."""
_ENCODED: dict[int, tuple[Frame, str]] = {}
"""Bodies encoded once and not yet asked for again, by ``id``: a frame is encoded when it is
emitted (so an unstorable one fails the step that made it), and its commit takes the body out.
Each entry holds its frame, so an id is not reused while it is here."""
_ENCODED_KEEP = 256


def frame_body_json(frame: Frame) -> str:
    """The frame's fields except ``run_id`` and ``seq`` as JSON: what a store keeps beside
    those two columns and the type. ``TypeError`` if a field holds something JSON cannot."""
    known = _ENCODED.pop(id(frame), None)
    if known is not None and known[0] is frame:
        return known[1]
    text = _encode_body(frame)
    if len(_ENCODED) >= _ENCODED_KEEP:
        _ENCODED.clear()
    _ENCODED[id(frame)] = (frame, text)
    return text


def _encode_body(frame: Frame) -> str:
    cls = type(frame)
    body_of = _BODIES.get(cls)
    if body_of is None:
        body_of = _BODIES[cls] = _body_of(cls)
    return jsoncodec.dumps_typed(body_of(frame))


def _body_of(cls: type[Frame]) -> Callable[[Any], dict[str, Any]]:
    """A function making the stored body of a ``cls`` frame: its fields but ``run_id`` and
    ``seq``, those with a plain default (None, "", 0, False) only when not at it (reading
    fills them back in). Straight-line code made once per class: every emit encodes a body
    (a dataclass's field names are identifiers, never keywords)."""
    stored = [f for f in dataclasses.fields(cls) if f.name not in ("run_id", "seq")]
    always = [f.name for f in stored if type(f.default) not in _PLAIN]
    optional = [(f.name, f.default) for f in stored if type(f.default) in _PLAIN]
    lines = ["def body_of(frame):"]
    lines.append("    body = {" + ", ".join(f"{n!r}: frame.{n}" for n in always) + "}")
    namespace: dict[str, Any] = {}
    for i, (name, default) in enumerate(optional):
        namespace[f"_default{i}"], namespace[f"_type{i}"] = default, type(default)
        lines.append(f"    value = frame.{name}")
        lines.append(
            f"    if value is not _default{i} and "
            f"(type(value) is not _type{i} or value != _default{i}):"
        )
        lines.append(f"        body[{name!r}] = value")
    lines.append("    return body")
    exec("\n".join(lines), namespace)
    made: Callable[[Any], dict[str, Any]] = namespace["body_of"]
    return made


def unstorable_field(frame: Frame) -> str:
    """Which field keeps ``frame`` from being stored, and why (for error messages)."""
    for name in _names(type(frame)):
        try:
            jsoncodec.dumps(_encode(getattr(frame, name)))
        except (TypeError, ValueError) as exc:
            return f"frame '{frame.type}' field '{name}' cannot be stored ({exc})"
    return f"frame '{frame.type}' cannot be stored"


_STAMPERS: dict[type[Frame], Callable[[Any], Any] | None] = {}


def stamped(frame: F, run_id: str, seq: int) -> F:
    """A copy of ``frame`` with its run id and seq set (what ``dataclasses.replace`` does,
    without re-running ``__init__``: frames are stamped on every emit)."""
    cls = type(frame)
    try:
        stamp = _STAMPERS[cls]
    except KeyError:
        stamp = _STAMPERS[cls] = stamper(cls, ("run_id", "seq"))
    if stamp is None:
        return dataclasses.replace(frame, run_id=run_id, seq=seq)
    copy: F = stamp(frame)
    _set_run_id(copy, run_id)
    _set_seq(copy, seq)
    return copy


def stamp_made(frame: F, run_id: str, seq: int) -> F:
    """``frame`` itself with its run id and seq set: for a frame that its maker has just built
    and holds alone (nobody sees it change), without ``stamped``'s copy."""
    _set_run_id(frame, run_id)
    _set_seq(frame, seq)
    return frame
