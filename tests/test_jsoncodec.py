"""The one JSON module: orjson's and msgspec's speed, the stdlib's coverage and errors, options
for text a person reads, and typed reading."""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kforge.jsoncodec import (
    JSONDecodeError,
    convert,
    dumps,
    dumps_bytes,
    dumps_typed,
    json_form,
    loads,
    loads_as,
    not_json,
    raw_decode,
    to_builtins,
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


@dataclass(eq=False)
class Visit:
    """A typed value inside an agent's state."""

    place: str
    at: datetime
    colour: Colour
    tags: tuple[str, ...] = ()


@dataclass(eq=False)
class TypedState:
    visits: list[Visit] = field(default_factory=list)
    last: Visit | None = None
    counts: dict[str, int] = field(default_factory=dict)
    note: str = ""


class TypedStateAgent:
    """Two steps with a question between them; its state holds dataclasses, an enum, datetimes
    and tuples, saved and restored by their types."""

    agent_type = "test.typed_state"

    def __init__(self, args: dict[str, Any]) -> None:
        self.state = TypedState()

    async def step(self, ctx: Any) -> Any:
        from kforge.engine.agent import StepOutcome

        if not self.state.visits:
            visit = Visit("harbour", datetime(2024, 5, 1, 12, tzinfo=UTC), Colour.RED, ("a", "b"))
            self.state.visits.append(visit)
            self.state.last, self.state.counts = visit, {"harbour": 1}
            return StepOutcome()
        answer = await ctx.ask("Where next?")
        last = self.state.last
        assert isinstance(last, Visit) and isinstance(last.at, datetime)
        assert last.colour is Colour.RED and last.tags == ("a", "b")
        self.state.note = str(answer["text"])
        return StepOutcome(True, {"place": last.place, "at": last.at.isoformat()}, "done")

    def get_state(self) -> dict[str, Any]:
        saved: dict[str, Any] = to_builtins(self.state)
        return saved

    def restore_state(self, state: dict[str, Any]) -> None:
        self.state = convert(state, TypedState)

    def partial_result(self) -> dict[str, Any]:
        return {}


async def test_an_agent_state_of_typed_values_survives_a_pause_in_another_runtime(
    tmp_path: Path,
) -> None:
    from kforge.llm.testing.scripted import ScriptedModel
    from kforge.runtime import AgentRegistry, Runtime
    from kforge.store import RunStatus
    from kforge.store.sqlite import SQLiteStore

    registry = AgentRegistry()
    registry.register(TypedStateAgent.agent_type, TypedStateAgent)
    first = Runtime(SQLiteStore(tmp_path / "k.db"), model=ScriptedModel(), registry=registry)
    run = await first.run(TypedStateAgent.agent_type, {})
    assert run.status == RunStatus.AWAITING_USER
    await first.aclose()
    second = Runtime(SQLiteStore(tmp_path / "k.db"), model=ScriptedModel(), registry=registry)
    await second.resume(run.id, {"text": "the hill"})
    done = await second.wait(run.id)
    assert done.status == RunStatus.COMPLETED, done.error
    assert done.result == {"place": "harbour", "at": "2024-05-01T12:00:00+00:00"}
    await second.aclose()


def test_typed_values_become_json_values_and_back() -> None:
    visit = Visit("harbour", datetime(2024, 5, 1, 12, tzinfo=UTC), Colour.RED, ("a",))
    state = TypedState(visits=[visit], last=visit, counts={"harbour": 1})
    saved = to_builtins(state)
    assert saved["last"] == {
        "place": "harbour",
        "at": "2024-05-01T12:00:00Z",
        "colour": "red",
        "tags": ("a",),  # a JSON array once written
    }
    again = convert(loads(dumps(saved)), TypedState)
    assert again.last is not None and again.last.tags == ("a",) and again.counts == {"harbour": 1}
    assert convert({"note": "older save"}, TypedState).visits == []  # missing: the default
    with pytest.raises(ValueError, match=r"Expected `int`, got `str` - at `\$.counts\[\.\.\.\]`"):
        convert({"counts": {"harbour": "one"}}, TypedState)


class Gauge:
    """Not a dataclass: its JSON form is what ``json_form`` says."""

    def __init__(self, level: int) -> None:
        self.level = level


json_form(Gauge, lambda g: {"level": g.level}, lambda data: Gauge(int(data["level"])))


@dataclass
class Panel:
    gauge: Gauge | None = None


def test_a_type_with_its_own_json_form_is_written_and_read_wherever_it_appears() -> None:
    saved = to_builtins(Panel(Gauge(3)))
    assert saved == {"gauge": {"level": 3}}
    assert convert(saved, Panel).gauge is not None
    assert loads_as(dumps(saved), Panel).gauge.level == 3  # type: ignore[union-attr]
    assert convert({}, Panel).gauge is None
    with pytest.raises(TypeError, match=r"'object' is not JSON: .* kforge\.jsoncodec\.json_form"):
        to_builtins(Panel(object()))  # type: ignore[arg-type]


class _Opaque:
    """A class with no JSON form."""


@dataclasses.dataclass
class _Holder:
    x: _Opaque


def test_reading_into_a_type_with_no_json_form_names_the_type_and_the_field() -> None:
    with pytest.raises(ValueError, match=r"'_Opaque' has no JSON form.*\$\.x"):
        convert({"x": 1}, _Holder)


def test_spaced_scalars_are_written_as_the_stdlib_writes_them_without_its_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool returning a number has its text written once per call: no encoder set up."""
    from kforge import jsoncodec

    values = [0, -7, 2**70, True, False, None]
    expected = [json.dumps(v, ensure_ascii=False, separators=(", ", ": ")) for v in values]

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("the stdlib encoder was set up for a scalar")

    monkeypatch.setattr(jsoncodec, "_stdlib_text", refuse)
    assert [jsoncodec.dumps(v, spaced=True) for v in values] == expected
