"""Frames round-trip exactly through JSON, for every frame type."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge import frames as fr
from kforge import jsoncodec
from kforge.frames import Frame, frame_from_json, frame_to_json

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
datetimes = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)

FRAME_TYPES: list[type[Frame]] = [
    obj
    for name in fr.__all__
    if isinstance(obj := getattr(fr, name), type) and issubclass(obj, Frame) and obj is not Frame
]


def strategy_for(hint: Any) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is str:
        return st.text(max_size=30)
    if hint is int:
        return st.integers(min_value=0, max_value=2**40)
    if hint is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if hint is bool:
        return st.booleans()
    if hint is datetime:
        return datetimes
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return st.sampled_from(list(hint))
    if origin is tuple:
        return st.lists(strategy_for(args[0]), max_size=4).map(tuple)
    if origin is dict:
        return json_objects
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(strategy_for(a) for a in args))
    if hint is type(None):
        return st.none()
    if hint is Any:
        return json_values
    raise AssertionError(f"no strategy for {hint!r}")


@st.composite
def any_frame(draw: st.DrawFn) -> Frame:
    cls = draw(st.sampled_from(FRAME_TYPES))
    hints = typing.get_type_hints(cls)
    kwargs = {f.name: draw(strategy_for(hints[f.name])) for f in dataclasses.fields(cls)}
    if cls is fr.DataEvent:
        kwargs["name"] = draw(st.from_regex(r"[a-z]+(\.[a-z]+){0,2}", fullmatch=True))
    return cls(**kwargs)


def test_every_frame_type_is_covered() -> None:
    assert len(FRAME_TYPES) >= 23
    assert len({cls.TYPE for cls in FRAME_TYPES}) == len(FRAME_TYPES)


@settings(max_examples=300)
@given(any_frame())
def test_frame_json_round_trip_is_exact(frame: Frame) -> None:
    text = frame_to_json(frame)
    back = frame_from_json(text)
    assert back == frame
    assert type(back) is type(frame)
    assert frame_to_json(back) == text


def test_data_events_keep_their_dotted_name() -> None:
    frame = fr.DataEvent(name="question.added", payload={"id": "q1"})
    assert frame.type == "data.question.added"
    assert frame_from_json(frame_to_json(frame)) == frame


def test_unknown_type_is_a_clear_error() -> None:
    import pytest

    with pytest.raises(ValueError, match="unknown frame type 'nope'"):
        fr.frame_from_dict({"type": "nope"})


def test_new_ids_are_unique_version_4_uuids_also_after_a_fork() -> None:
    import os
    import uuid

    from kforge.frames import new_id

    ids = {new_id() for _ in range(20_000)}
    assert len(ids) == 20_000
    for value in list(ids)[:200]:
        parsed = uuid.UUID(value)
        assert parsed.hex == value and parsed.version == 4 and parsed.variant == uuid.RFC_4122
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child writes its next id and leaves at once
        os.write(write, new_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    os.close(write)
    assert child != new_id() and child not in ids


@settings(max_examples=300)
@given(any_frame(), st.text(max_size=12), st.integers(min_value=1, max_value=2**40))
def test_stored_body_and_stamping_agree_with_the_dict_form(
    frame: Frame, run_id: str, seq: int
) -> None:
    """What a store writes (the body) and what emit does (stamping) match the slow, obvious
    forms: frame_to_dict without run_id/seq/type and fields at their plain defaults, and
    dataclasses.replace; the body reads back as the frame."""
    body = fr.frame_body_json(frame)
    expected = fr.frame_to_dict(frame)
    del expected["run_id"], expected["seq"], expected["type"]
    for f in dataclasses.fields(frame):
        plain = f.default is None or type(f.default) in (str, int, float, bool)
        value = expected.get(f.name)
        if plain and type(value) is type(f.default) and value == f.default:
            del expected[f.name]
    assert jsoncodec.loads(body) == expected
    restored = fr.frame_from_dict({**jsoncodec.loads(body), "type": frame.type})
    assert restored == dataclasses.replace(frame, run_id="", seq=0)
    assert fr.frame_from_body(frame.type, body, run_id, seq) == dataclasses.replace(
        frame, run_id=run_id, seq=seq
    )

    copy = fr.stamped(frame, run_id, seq)
    assert copy == dataclasses.replace(frame, run_id=run_id, seq=seq)
    assert type(copy) is type(frame)
    assert copy is not frame


def test_stamping_leaves_the_original_frozen_and_untouched() -> None:
    import pytest

    frame = fr.StatusChanged(from_status="pending", to_status="running")
    copy = fr.stamped(frame, "run", 7)
    assert (frame.run_id, frame.seq) == ("", 0)
    assert (copy.run_id, copy.seq, copy.id, copy.created_at) == (
        "run",
        7,
        frame.id,
        frame.created_at,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.seq = 8  # type: ignore[misc]


def test_stored_body_falls_back_for_what_orjson_refuses_and_rejects_non_json() -> None:
    import pytest

    big = fr.DataEvent(name="x", payload={"n": 2**70, "keys": {1: "one"}})
    assert jsoncodec.loads(fr.frame_body_json(big))["payload"] == {
        "n": 2**70,
        "keys": {"1": "one"},
    }
    with pytest.raises(TypeError):
        fr.frame_body_json(fr.DataEvent(name="x", payload={"obj": object()}))
    with pytest.raises(TypeError):
        fr.frame_body_json(fr.DataEvent(name="x", payload={"dc": fr.StatusChanged(to_status="x")}))
