"""Frames are built and stamped by straight-line code made once per class (``frames.slots``),
which does what the dataclass's own code does."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from kforge import frames as fr
from kforge.frames.slots import fast_init, stamper
from kforge.frames.vocabulary import _REGISTRY


def _sample(f: dataclasses.Field[Any]) -> Any:
    """A value for a required field (the init does not check types)."""
    return f"value of {f.name}"


@pytest.mark.parametrize("cls", sorted(_REGISTRY.values(), key=lambda c: c.TYPE), ids=str)
def test_every_frame_class_is_built_by_slot_setters_as_its_dataclass_would(
    cls: type[fr.Frame],
) -> None:
    init = cls.__init__
    # the dataclass's own __init__ goes through object.__setattr__ for every field
    assert "__setattr__" not in init.__code__.co_names
    original = init.__wrapped__  # type: ignore[attr-defined]
    assert inspect.signature(init) == inspect.signature(original)

    required = {
        f.name: _sample(f)
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    built = cls(**required)
    expected = object.__new__(cls)
    original(expected, id=built.id, created_at=built.created_at, **required)
    assert built == expected
    # a default factory makes a new value for each frame
    other = cls(**required)
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING and f.name != "created_at":
            assert getattr(other, f.name) is not getattr(built, f.name) or f.name == "id"
    assert other.id != built.id

    given = {f.name: f"given {f.name}" for f in dataclasses.fields(cls)}
    full = cls(**given)
    assert all(getattr(full, name) == value for name, value in given.items())
    with pytest.raises(dataclasses.FrozenInstanceError):
        full.seq = 3  # type: ignore[misc]


def test_a_frame_missing_a_field_or_given_one_by_position_is_refused_as_before() -> None:
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'tool_name'"):
        fr.ToolCallFrame(call_id="c")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        fr.ErrorFrame("x", "y")  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        fr.ErrorFrame(error_type="x", message="y", nope=1)  # type: ignore[call-arg]


def test_classes_the_generated_code_cannot_stand_for_keep_their_own_init() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
    class Private:
        _a: int

    for cls in (Checked, NoSlots, Private):
        assert fast_init(cls) is None
    assert stamper(NoSlots, ()) is None


def test_a_frame_subclass_made_outside_the_vocabulary_is_built_the_same_way() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
    class Custom(fr.Frame):
        note: str
        tags: list[str] = dataclasses.field(default_factory=list)

    frame = Custom(note="n")
    assert "__setattr__" not in Custom.__init__.__code__.co_names
    assert (frame.note, frame.tags, frame.seq, frame.run_id) == ("n", [], 0, "")
    copy = fr.stamped(frame, "run", 4)
    assert copy == dataclasses.replace(frame, run_id="run", seq=4)
    assert copy.tags is frame.tags


def test_the_records_a_step_makes_are_built_by_slot_setters_as_their_dataclasses_would() -> None:
    from kforge.engine.agent import StepOutcome
    from kforge.llm.types import Message, ModelResponse, ToolCall, Usage
    from kforge.store.base import StepRecord
    from kforge.tools.content import ContentBlock, ContentType
    from kforge.tools.result import ToolResult

    made = [
        (Message, ("assistant", "hi"), {"tool_calls": (ToolCall("add", {"a": 1}, "c"),)}),
        (Message, ("tool",), {"content": "2", "tool_call_id": "c", "name": "add"}),
        (ToolCall, ("add",), {}),
        (Usage, (1, 2), {}),
        (ModelResponse, ("text",), {"finish_reason": "length"}),
        (ToolResult, ((ContentBlock(ContentType.TEXT, "x"),),), {"is_error": True}),
        (ContentBlock, (ContentType.TEXT,), {"text": "x"}),
        (StepOutcome, (True, {"answer": 1}), {}),
        (StepRecord, (1, 5, [["s", ["a"], 1]]), {}),
    ]
    for cls, args, kwargs in made:
        init = cls.__init__
        assert "__setattr__" not in init.__code__.co_names, cls
        expected = object.__new__(cls)
        init.__wrapped__(expected, *args, **kwargs)  # type: ignore[attr-defined]
        assert cls(*args, **kwargs) == expected
        assert inspect.signature(init) == inspect.signature(init.__wrapped__)  # type: ignore[attr-defined]
    # a default factory makes a new value each time; too many arguments are refused as before
    assert (
        ModelResponse().usage == Usage() and ToolCall("a").arguments is not ToolCall("a").arguments
    )
    with pytest.raises(TypeError, match="takes from 1 to 4 positional arguments but 5"):
        Usage(1, 2, 3, 4)  # type: ignore[call-arg]
