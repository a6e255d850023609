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
from typing import Any

import orjson

__all__ = ["dumps", "loads"]

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


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; ``json.JSONDecodeError`` (a ``ValueError``) if it is not JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
