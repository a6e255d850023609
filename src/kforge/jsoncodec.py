"""The package's one JSON module: every value kforge writes or reads as JSON passes through here.

Written and read with orjson as compact UTF-8 text (sorted keys and indentation for text a
person reads, the stdlib's spaced form for text a model reads); read with msgspec straight into
a dataclass where the shape is known (``loads_as``). Typed values (frames, agents' state, the
records of model calls and limits) become JSON values and back here too (``to_builtins``,
``convert``): dataclasses field by field, with ``json_form`` for the few types whose JSON form
is not their fields. Every frame, state delta and snapshot
passes through here, so the codec's speed is the store's speed. The stdlib handles what the
fast paths refuse (integers beyond 64 bits, non-string keys, legacy ``NaN`` literals) and
raises the usual ``TypeError`` for values that are not JSON at all (dataclasses, datetimes and
other objects are never converted silently, except by ``dumps_typed``, whose reader knows the
types, and the few types given a written form with ``written_form``: a ``Message`` in an agent's
history). One deliberate difference: non-finite floats, which JSON cannot express, are written
as ``null`` (the spaced form writes what the stdlib writes).
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import msgspec
import orjson
from msgspec import Raw
from msgspec import Struct as Record

__all__ = [
    "JSONDecodeError",
    "Raw",
    "Record",
    "convert",
    "dumps",
    "dumps_bytes",
    "dumps_typed",
    "json_form",
    "loads",
    "loads_as",
    "not_json",
    "raw_decode",
    "strict_decoder",
    "to_builtins",
    "written_form",
]

T = TypeVar("T")

JSONDecodeError = json.JSONDecodeError
"""What ``loads`` raises for text that is not JSON (a ``ValueError``; orjson's is a subclass)."""

_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def dumps(
    value: Any,
    *,
    sort_keys: bool = False,
    indent: bool = False,
    spaced: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``value`` as compact JSON text; ``TypeError`` if it holds something JSON cannot,
    ``ValueError`` if it holds a string UTF-8 cannot (a lone surrogate).

    ``sort_keys`` for text compared or used as a key, ``indent`` (two spaces) for text a person
    reads, ``default`` to turn what JSON cannot hold into what it can (``str`` for a summary).
    ``spaced`` puts a space after each comma and colon, on one line: the form prompts show a
    model (the default model's answers were measured on it) and stored keys were written in."""
    if spaced and not indent:  # text a model reads, never stored as it is: not checked for UTF-8
        scalar = _SCALAR_TEXT.get(type(value))
        if scalar is not None:  # a tool's number: no encoder to set up for one token
            return scalar(value)
        return _stdlib_text(value, sort_keys=sort_keys, spaced=True, default=default)
    if sort_keys or indent or default is not None:
        return dumps_bytes(value, sort_keys=sort_keys, indent=indent, default=default).decode()
    try:  # the record's path (every state delta and snapshot): no options to work out
        return orjson.dumps(value, default=_written, option=_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError; the stdlib either manages or says why not
        return _stdlib_dumps(value, default=_written).decode()


_SCALAR_TEXT: dict[type[Any], Callable[[Any], str]] = {
    int: int.__repr__,
    bool: lambda value: "true" if value else "false",
    type(None): lambda value: "null",
}
"""What the stdlib writes for these exact types, whatever its options."""

_WRITTEN: dict[type[Any], Callable[[Any], Any]] = {}


def written_form(kind: type[T], dump: Callable[[T], Any]) -> None:
    """Write every ``kind`` (exactly that class) that ``dumps`` meets as the JSON value
    ``dump`` makes of it: a type agents keep in their state (a ``Message`` in an
    ``AppendOnlyList``), read back by whoever knows where it is."""
    _WRITTEN[kind] = dump


def _written(value: Any) -> Any:
    dump = _WRITTEN.get(type(value))
    if dump is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return dump(value)


def dumps_bytes(
    value: Any,
    *,
    sort_keys: bool = False,
    indent: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> bytes:
    """``dumps`` as UTF-8 bytes, for a pipe, a socket or a file."""
    option = _OPTIONS
    if sort_keys:
        option |= orjson.OPT_SORT_KEYS
    if indent:
        option |= orjson.OPT_INDENT_2
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError:  # orjson.JSONEncodeError; the stdlib either manages or says why not
        return _stdlib_dumps(value, sort_keys=sort_keys, indent=indent, default=default)


def dumps_typed(value: Any) -> str:
    """``value`` as compact JSON text where the reader knows each field's type (``loads_as``):
    datetimes as ISO 8601 text, enums as their values, tuples as lists. Dataclasses and other
    objects still raise ``TypeError``."""
    try:
        return orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_DATACLASS).decode()
    except TypeError:
        return _stdlib_dumps(value, default=_typed_default).decode()


def _typed_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _stdlib_dumps(
    value: Any,
    *,
    sort_keys: bool = False,
    indent: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> bytes:
    """What orjson refuses (integers beyond 64 bits, keys that are not strings), or why not."""
    text = _stdlib_text(value, sort_keys=sort_keys, indent=indent, default=default)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text holds a lone surrogate ({text[exc.start : exc.end]!a}), which UTF-8 cannot store"
        ) from None


_ENCODERS: dict[tuple[bool, bool, bool, Callable[[Any], Any] | None], json.JSONEncoder] = {}
"""The stdlib's encoders by options, each built once: ``json.dumps`` builds one per call
whenever an option differs from its defaults."""


def _stdlib_text(
    value: Any,
    *,
    sort_keys: bool = False,
    indent: bool = False,
    spaced: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    key = (sort_keys, indent, spaced, default)
    encoder = _ENCODERS.get(key)
    if encoder is None:
        if len(_ENCODERS) >= 64:  # a new ``default`` function per call
            _ENCODERS.clear()
        encoder = _ENCODERS[key] = json.JSONEncoder(
            ensure_ascii=False,
            sort_keys=sort_keys,
            indent=2 if indent else None,
            separators=(", ", ": ") if spaced else (",", ": ") if indent else (",", ":"),
            default=default,
        )
    return encoder.encode(value)


_DIGITS = bytes(0x31 if 0x30 <= byte <= 0x39 else 0x30 for byte in range(256))
"""Maps each ASCII digit to ``1`` and every other byte to ``0`` (JSON numbers are ASCII)."""
_LONG_RUN = b"1" * 19


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; ``json.JSONDecodeError`` (a ``ValueError``) if it is not JSON.

    orjson reads integers beyond 64 bits as floats, silently; text with a run of 19 digits (the
    only place such an integer can be) is read by the stdlib, which keeps them exact. The run is
    found with ``bytes.translate`` (ten times faster than a regex), on every ninth byte first.
    (msgspec keeps them exact too, but reads a large state a sixth slower than orjson.)"""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    # Any run of 19 digits holds two consecutive multiples of 9, so every ninth byte finds
    # each one as two digits in a row, in a ninth of the time; only then is all of it read.
    if b"11" in data[::9].translate(_DIGITS) and _LONG_RUN in data.translate(_DIGITS):
        return json.loads(text)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(text)


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """The JSON value that begins at ``text[start]`` and the index just past it, for a value
    with more text after it (a model's reply); ``JSONDecodeError`` if none begins there."""
    return _DECODER.raw_decode(text, start)


_DECODER = json.JSONDecoder()


def loads_as(text: str | bytes, kind: type[T]) -> T:
    """JSON ``text`` read straight into a ``kind`` (a dataclass, or a type built of them): ISO
    8601 text becomes datetimes, values become enums, lists become tuples where ``kind`` says
    so, and fields ``text`` leaves out take their defaults. ``ValueError`` naming the field when
    the text does not fit, or is not JSON."""
    decoder = _TYPED_DECODERS.get(kind)
    if decoder is None:
        decoder = _TYPED_DECODERS[kind] = msgspec.json.Decoder(kind, dec_hook=_load_form)
    try:
        result: T = decoder.decode(text)
        return result
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError:  # legacy text only the stdlib reads (NaN literals, say)
        return convert(loads(text), kind)


_TYPED_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}
"""One decoder per type, built on its first read (a tenth of a millisecond)."""


def convert(value: Any, kind: type[T]) -> T:
    """``value`` (JSON values, as ``loads`` or ``to_builtins`` returns them) as a ``kind``, as
    ``loads_as`` reads text; ``ValueError`` naming the field that does not fit (``$.a[2].b``)."""
    return msgspec.convert(value, kind, dec_hook=_load_form)


def to_builtins(value: Any) -> Any:
    """``value`` as JSON values (dicts, lists, strings, numbers, booleans, None), new containers
    throughout, for ``convert`` to read back: a dataclass as an object of its fields (without
    slots, of those its instance holds: a field it never set, still the class's default, is
    left out and reads back as that default), an enum as its value, a datetime as ISO 8601
    text, bytes as base64, a ``json_form`` type as its ``dump`` makes it. Tuples stay tuples
    (JSON arrays once written). ``TypeError`` naming what is not JSON otherwise.

    Against the hand-written forms it replaced: faster for a whole agent state (the ReAct
    loop's), but about 1 µs for any dataclass, four times a small value's dict literal, which
    is why the few values recorded at every step keep theirs (``Usage.to_dict``)."""
    return msgspec.to_builtins(value, enc_hook=_dump_form)


_FORMS: dict[type[Any], tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {}


def json_form(kind: type[T], dump: Callable[[T], Any], load: Callable[[Any], T]) -> None:
    """Give ``kind`` (a class that is not a dataclass, say one holding a function) the JSON
    form ``dump`` makes and ``load`` reads back, wherever it appears in what ``to_builtins``,
    ``convert`` and ``loads_as`` handle."""
    _FORMS[kind] = (dump, load)


def _dump_form(value: Any) -> Any:
    form = _FORMS.get(type(value))
    if form is None:
        raise TypeError(
            f"{type(value).__name__!r} is not JSON: make it a dataclass of JSON values, or "
            "give its type a JSON form with kforge.jsoncodec.json_form"
        )
    return form[0](value)


def _load_form(kind: type[Any], value: Any) -> Any:
    form = _FORMS.get(kind)
    if form is None:  # msgspec turns this into a ValidationError naming the field
        raise TypeError(
            f"{kind.__name__!r} has no JSON form: make it a dataclass of JSON values, or give "
            "its type one with kforge.jsoncodec.json_form"
        )
    return form[1](value)


def not_json(value: Any) -> tuple[str, str] | None:
    """Where ``value`` holds something the record cannot keep as it is, and what: ``(path, what)``
    with a path such as ``a.b[2]`` (empty for ``value`` itself), or None when it is all JSON.

    JSON here is what reads back equal: objects with string keys, lists (tuples too), strings
    UTF-8 can encode, booleans, null, integers and finite floats. NaN and the infinities are
    refused, since they would read back as null.
    """
    try:
        # the common case, checked in C: it encodes, and reads back equal (NaN and the
        # infinities read back as null, tuples as lists: those take the walk below)
        if orjson.loads(orjson.dumps(value)) == value:
            return None
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        pass
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if item is None or isinstance(item, bool | int):
            continue
        if isinstance(item, float):
            if math.isfinite(item):
                continue
            return path, "NaN" if math.isnan(item) else "an infinity"
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError:
                return path, "a string that is not valid Unicode (it holds a lone surrogate)"
            continue
        if isinstance(item, dict):
            for key, inner in reversed(item.items()):
                if not isinstance(key, str):
                    return path, f"an object key that is not a string ({key!r})"
                stack.append((path, key))  # a key must encode like any string
                stack.append((f"{path}.{key}" if path else key, inner))
            continue
        if isinstance(item, list | tuple):
            stack.extend((f"{path}[{i}]", inner) for i, inner in reversed(list(enumerate(item))))
            continue
        return path, f"a {type(item).__name__}"
    return None


def strict_decoder(kind: Any) -> Callable[[bytes | memoryview], Any]:
    """A reader of JSON straight into ``kind``: ``Record`` classes (typed records, never dicts
    of them), lists and dicts of them, ``Raw`` for a stretch left undecoded. No hook and no
    fallback: ``ValueError`` when the JSON is of another shape or not JSON."""
    decode = msgspec.json.Decoder(kind).decode

    def read(data: bytes | memoryview) -> Any:
        try:
            return decode(data)
        except msgspec.MsgspecError as exc:
            raise ValueError(str(exc)) from None

    return read
