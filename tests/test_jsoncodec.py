"""The one JSON module: orjson's and msgspec's speed, the stdlib's coverage and errors, options
for text a person reads, and typed reading."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kforge.jsoncodec import (
    JSONDecodeError,
    dumps,
    dumps_bytes,
    dumps_typed,
    loads,
    loads_as,
    not_json,
    raw_decode,
)

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


def test_text_for_people_is_indented_and_keys_can_be_sorted() -> None:
    value = {"b": 1, "a": [1, 2], "é": "ü"}
    assert dumps(value, sort_keys=True) == '{"a":[1,2],"b":1,"é":"ü"}'
    assert dumps(value, indent=True) == '{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ],\n  "é": "ü"\n}'
    assert dumps({"n": 2**70, "a": 1}, sort_keys=True, indent=True) == (
        '{\n  "a": 1,\n  "n": 1180591620717411303424\n}'
    )
    assert dumps_bytes(value) == dumps(value).encode()


@given(json_values)
def test_the_spaced_form_is_the_stdlibs_one_line_form(value: Any) -> None:
    """What prompts show a model and older keys were written in, unchanged."""
    assert dumps(value, spaced=True) == json.dumps(value, ensure_ascii=False)
    assert dumps(value, spaced=True, sort_keys=True) == json.dumps(
        value, ensure_ascii=False, sort_keys=True
    )


def test_default_turns_what_json_cannot_hold_into_what_it_can() -> None:
    when = datetime(2024, 5, 1, tzinfo=UTC)
    assert loads(dumps({"at": when, "n": 2**70}, default=str)) == {"at": str(when), "n": 2**70}
    with pytest.raises(TypeError):
        dumps({"at": when})


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True, kw_only=True, slots=True)
class Record:
    at: datetime
    colour: Colour
    tags: tuple[str, ...] = ()
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def test_a_typed_record_round_trips_with_its_field_types() -> None:
    record = Record(at=datetime(2024, 5, 1, 12, tzinfo=UTC), colour=Colour.RED, tags=("x",))
    text = dumps_typed({"at": record.at, "colour": record.colour, "tags": record.tags})
    assert loads(text) == {"at": "2024-05-01T12:00:00+00:00", "colour": "red", "tags": ["x"]}
    assert loads_as(text, Record) == record
    big = dumps_typed({"at": record.at, "colour": Colour.RED, "extra": {"n": 2**70}})
    assert loads_as(big, Record).extra == {"n": 2**70}


def test_typed_reading_names_the_field_that_does_not_fit() -> None:
    with pytest.raises(ValueError, match="colour"):
        loads_as('{"at": "2024-05-01T12:00:00+00:00", "colour": "blue"}', Record)
    with pytest.raises(ValueError, match="colour"):
        loads_as('{"at": "2024-05-01T12:00:00+00:00"}', Record)
    with pytest.raises(ValueError):
        loads_as('{"at": ', Record)


def test_typed_reading_takes_legacy_text_the_stdlib_reads() -> None:
    text = '{"at": "2024-05-01T12:00:00+00:00", "colour": "red", "extra": {"x": NaN}}'
    extra = loads_as(text, Record).extra
    assert extra["x"] != extra["x"]


def test_raw_decode_reads_the_value_before_more_text() -> None:
    assert raw_decode('say {"a": [1]} then', 4) == ({"a": [1]}, 14)
    with pytest.raises(JSONDecodeError):
        raw_decode("say nothing", 0)
