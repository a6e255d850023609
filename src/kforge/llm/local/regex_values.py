"""Strings that match a regular expression, for generating schema-valid values with ``pattern``."""

from __future__ import annotations

import random
import re
import string
from typing import Any

__all__ = ["string_matching"]

_POOL = string.ascii_letters + string.digits + " _-.,:/@"
_CATEGORIES = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_NOT_DIGIT": string.ascii_letters + " _-",
    "CATEGORY_WORD": string.ascii_letters + string.digits + "_",
    "CATEGORY_NOT_WORD": " -.,:/@",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": string.ascii_letters + string.digits,
}
_EXTRA_REPEATS = 3


def _parser() -> Any:
    import re._parser as sre_parse  # type: ignore[import-not-found,unused-ignore]

    return sre_parse


def string_matching(pattern: str, rng: random.Random) -> str:
    """A random string that ``re.fullmatch(pattern, ...)`` accepts, as far as the parser allows.

    Lookarounds are ignored, so the caller must check the result. Raises ``re.error`` for a
    pattern Python cannot compile.
    """
    parsed = _parser().parse(pattern)
    groups: dict[int, str] = {}
    return _emit(list(parsed), rng, groups)


def _emit(items: list[tuple[Any, Any]], rng: random.Random, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append(rng.choice([c for c in _POOL if ord(c) != arg]))
        elif name == "ANY":
            out.append(rng.choice(_POOL))
        elif name == "IN":
            out.append(_from_set(arg, rng))
        elif name == "BRANCH":
            out.append(_emit(list(rng.choice(arg[1])), rng, groups))
        elif name == "SUBPATTERN":
            group, _, _, sub = arg
            text = _emit(list(sub), rng, groups)
            if group is not None:
                groups[group] = text
            out.append(text)
        elif name == "ATOMIC_GROUP":
            out.append(_emit(list(arg), rng, groups))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            top = (
                low + _EXTRA_REPEATS
                if high == _parser().MAXREPEAT
                else min(high, low + _EXTRA_REPEATS)
            )
            for _ in range(rng.randint(low, max(low, top))):
                out.append(_emit(list(sub), rng, groups))
        elif name == "GROUPREF":
            out.append(groups.get(arg, ""))
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise re.error(f"unsupported regular expression construct {name}")
    return "".join(out)


def _from_set(items: list[tuple[Any, Any]], rng: random.Random) -> str:
    negate = False
    allowed: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            allowed.append(chr(arg))
        elif name == "RANGE":
            low, high = arg
            allowed.extend(chr(c) for c in range(low, min(high, low + 200) + 1))
        elif name == "CATEGORY":
            allowed.extend(_CATEGORIES.get(str(arg), ""))
    if negate:
        excluded = set(allowed)
        allowed = [c for c in _POOL if c not in excluded]
        if not allowed:
            raise re.error("negated character set excludes every generated character")
    if not allowed:
        raise re.error("empty character set")
    return rng.choice(allowed)
