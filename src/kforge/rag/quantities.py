"""The units a quantity question asks in without naming them, and whether a sentence gives a
number in them: "How big is the header?" asks for bytes, so "The first 100 bytes of the file
comprise the header" answers it and "at offset 28 into the header" does not."""

from __future__ import annotations

import re

from kforge.rag.question import NUMBER, Question

__all__ = ["asked_units", "states_in_units"]


_SIZE_UNITS = frozenset(
    """byte bytes kb kib mb mib gb gib tb tib kilobyte kilobytes megabyte megabytes gigabyte
    gigabytes bit bits""".split()  # noqa: SIM905
)
_TIME_UNITS = frozenset(
    """ms millisecond milliseconds sec secs second seconds minute minutes hour hours day days
    week weeks""".split()  # noqa: SIM905
)


def asked_units(question: Question) -> frozenset[str]:
    """The units a quantity question asks in without naming them: sizes for "how big", "how
    large", "the size of"; durations for "how long", a timeout or an interval."""
    text = question.text.lower()
    if question.kind != "quantity":
        return frozenset()
    if re.search(r"\bhow (?:big|large|small)\b|\bsizes?\b", text):
        return _SIZE_UNITS
    if re.search(r"\bhow long\b|\btimeouts?\b|\bdurations?\b|\bintervals?\b", text):
        return _TIME_UNITS
    return frozenset()


def states_in_units(text: str, units: frozenset[str]) -> bool:
    """True when ``text`` gives a number in one of ``units`` ("The first 100 bytes ...")."""
    return any(
        (after := re.match(r"\s+([A-Za-z]+)", text[m.end() :])) is not None
        and after.group(1).lower() in units
        for m in NUMBER.finditer(text)
    )
