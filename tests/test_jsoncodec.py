"""The record's JSON codec: orjson's speed, the stdlib's coverage and errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kforge.jsoncodec import dumps, loads, not_json

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_round_trip_matches_the_stdlib(value: Any) -> None:
    text = dumps(value)
    assert loads(text) == value
    assert json.loads(text) == value
    assert loads(json.dumps(value)) == value


def test_output_is_compact_utf8_text() -> None:
    assert dumps({"a": [1, 2], "é": "ü"}) == '{"a":[1,2],"é":"ü"}'


def test_what_orjson_refuses_the_stdlib_writes() -> None:
    huge = 2**80
    assert loads(dumps({"n": huge})) == {"n": huge}
    assert dumps({1: "x"}) == '{"1":"x"}'


def test_legacy_nan_literals_still_read() -> None:
    value = loads('{"x": NaN}')
    assert value["x"] != value["x"]


def test_non_finite_floats_are_written_as_null() -> None:
    assert loads(dumps([float("nan"), float("inf")])) == [None, None]


@dataclass
class Point:
    x: int


@pytest.mark.parametrize("value", [Point(1), datetime(2026, 1, 1, tzinfo=UTC), object(), {1, 2}])
def test_values_that_are_not_json_raise_type_error(value: object) -> None:
    with pytest.raises(TypeError):
        dumps({"value": value})


@pytest.mark.parametrize("text", ["{not json", "", '{"a": 1', b"\xff"])
def test_broken_text_raises_a_value_error(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        loads(text)


@given(json_values)
def test_every_json_value_is_kept_as_it_is(value: Any) -> None:
    assert not_json(value) is None


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({"a": [1, {"b": float("nan")}]}, ("a[1].b", "NaN")),
        ([float("-inf")], ("[0]", "an infinity")),
        ({"s": "\ud800"}, ("s", "a string that is not valid Unicode (it holds a lone surrogate)")),
        ({2: "two"}, ("", "an object key that is not a string (2)")),
        ({"when": datetime(2024, 1, 1, tzinfo=UTC)}, ("when", "a datetime")),
    ],
)
def test_not_json_names_where_and_what(value: Any, found: tuple[str, str]) -> None:
    assert not_json(value) == found


def test_integers_beyond_64_bits_read_back_exact_not_as_floats() -> None:
    for value in (-(2**63) - 1, 2**64, -(2**100), [1, {"n": 2**70}]):
        assert loads(dumps(value)) == value
        assert loads(dumps(value).encode()) == value
    assert loads('{"id": "1234567890123456789012"}') == {"id": "1234567890123456789012"}


def test_a_long_integer_is_found_wherever_it_starts() -> None:
    """The scan reads every ninth byte first: a 19-digit integer at any offset still counts."""
    for pad in range(20):
        for value in (2**64, -(2**63) - 1, 10**19):
            text = '{"' + "k" * pad + '": ' + str(value) + "}"
            assert loads(text) == {"k" * pad: value}, (pad, value)
            assert type(loads(text.encode())["k" * pad]) is int
