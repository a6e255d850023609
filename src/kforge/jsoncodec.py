"""The record's JSON: compact UTF-8 text, written and read with orjson, stdlib json as fallback.

Every frame, state delta and snapshot passes through here, so the codec's speed is the store's
speed. orjson is several times faster than the stdlib in both directions; the stdlib handles
what orjson refuses (integers beyond 64 bits, non-string keys, legacy ``NaN`` literals) and
raises the usual ``TypeError`` for values that are not JSON at all (dataclasses, datetimes and
other objects are never converted silently). One deliberate difference: non-finite floats,
which JSON cannot express, are written as ``null``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

__all__ = ["dumps", "loads", "not_json"]

_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def dumps(value: Any) -> str:
    """``value`` as compact JSON text; ``TypeError`` if it holds something JSON cannot,
    ``ValueError`` if it holds a string UTF-8 cannot (a lone surrogate)."""
    try:
        return orjson.dumps(value, option=_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError; the stdlib either manages or says why not
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text holds a lone surrogate ({text[exc.start : exc.end]!a}), which UTF-8 cannot store"
        ) from None
    return text


_DIGITS = bytes(0x31 if 0x30 <= byte <= 0x39 else 0x30 for byte in range(256))
"""Maps each ASCII digit to ``1`` and every other byte to ``0`` (JSON numbers are ASCII)."""
_LONG_RUN = b"1" * 19


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; ``json.JSONDecodeError`` (a ``ValueError``) if it is not JSON.

    orjson reads integers beyond 64 bits as floats, silently; text with a run of 19 digits (the
    only place such an integer can be) is read by the stdlib, which keeps them exact. The run is
    found with ``bytes.translate`` (ten times faster than a regex), on every ninth byte first."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    # Any run of 19 digits holds two consecutive multiples of 9, so every ninth byte finds
    # each one as two digits in a row, in a ninth of the time; only then is all of it read.
    if b"11" in data[::9].translate(_DIGITS) and _LONG_RUN in data.translate(_DIGITS):
        return json.loads(text)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(text)


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
