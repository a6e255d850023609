"""Answers are checked against what the interaction accepts before anything is recorded, and a
caller can wait until its answer is durable."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kforge.errors import ValidationError
from kforge.frames import InteractionAnswered, InteractionRequested
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime, normalize_answer
from kforge.runtime.interactions import answer_schema
from kforge.store import RunStatus, SQLiteStore
from tests.engine.sample_agents import make_registry

CHECKPOINT = InteractionRequested(
    interaction_id="i", kind="checkpoint", prompt="ok?", options=("approve", "modify", "reject")
)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            {"action": "modify", "modifications": "more please"},
            "'modifications' must be of type object",
        ),
        ({"action": "modify", "modifications": [1]}, "'modifications' must be of type object"),
        ({"action": "approve", "comment": 3}, "'comment' must be of type string"),
        ({"action": "ship"}, "must be one of approve, modify, reject"),
        ({"action": "approve", "tags": {"a"}}, "an answer must be JSON"),
        ({"action": "approve", "text": "\ud800"}, "an answer must be JSON"),
    ],
)
def test_answers_that_would_fail_the_run_later_are_refused(answer: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        normalize_answer(CHECKPOINT, answer)


def test_the_fields_check_says_what_the_answer_schema_says() -> None:
    """Without an asker's schema the rules are checked by hand: same verdicts, same words."""
    import itertools

    from kforge.runtime.interactions import _check_fields, _check_schema

    def verdict(check: Any, *args: Any) -> str | None:
        try:
            check(*args)
        except ValidationError as exc:
            return str(exc)
        return None

    values = ["s", 3, None, [1], {"a": 1}, True, 1.5]
    for combo in itertools.product(values, repeat=4):
        answer = {"action": "modify"}
        for name, value in zip(("text", "comment", "modifications", "reason"), combo, strict=True):
            if value is not None:
                answer[name] = value
        expected = verdict(_check_schema, answer, answer_schema(CHECKPOINT))
        assert verdict(_check_fields, answer) == expected, answer


def test_good_answers_pass_and_a_requested_schema_is_applied() -> None:
    assert normalize_answer(CHECKPOINT, "approve") == {"action": "approve"}
    ok = {"action": "modify", "modifications": {"items": ["x"]}}
    assert normalize_answer(CHECKPOINT, ok) == ok
    question = InteractionRequested(
        interaction_id="q",
        kind="question",
        prompt="how many?",
        payload={
            "answer_schema": {
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"],
            }
        },
    )
    assert "allOf" in answer_schema(question)
    assert normalize_answer(question, {"count": 2}) == {"count": 2}
    with pytest.raises(ValidationError, match="'count' must be of type integer"):
        normalize_answer(question, {"count": "two"})


async def test_a_bad_modify_answer_leaves_the_run_waiting_and_unchanged(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    rt = Runtime(store, model=ScriptedModel([{"items": ["a"]}]), registry=make_registry())
    run = await rt.run("test.draft", {"topic": "t"})
    with pytest.raises(ValidationError, match="modifications"):
        await rt.resume(run.id, {"action": "modify", "modifications": "not an object"})
    after = rt.get_run(run.id)
    assert (after.status, after.last_seq) == (RunStatus.AWAITING_USER, run.last_seq)
    rt._model = ScriptedModel([{"verdict": "ok"}])
    await rt.resume(run.id, "approve")
    assert (await rt.wait(run.id)).status == RunStatus.COMPLETED


async def test_durable_resume_returns_once_the_answer_is_stored(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    gate = asyncio.Event()

    class Gated(ScriptedModel):
        async def complete(self, *a: Any, **k: Any) -> Any:
            if self.remaining == 1:
                await gate.wait()  # the step after the answer waits here
            return await super().complete(*a, **k)

    rt = Runtime(
        SQLiteStore(db),
        model=Gated([{"items": ["a"]}, {"verdict": "ok"}]),
        registry=make_registry(),
    )
    run = await rt.run("test.draft", {"topic": "t"})
    assert run.status == RunStatus.AWAITING_USER, run.error
    await rt.resume(run.id, "approve", durable=True)
    reader = SQLiteStore(db)  # another connection: what any process would see now
    stored = [f for f in reader.read_frames(run.id) if isinstance(f, InteractionAnswered)]
    assert [f.answer for f in stored] == [{"action": "approve"}]
    assert reader.get_run(run.id).status == RunStatus.RUNNING
    reader.close()
    gate.set()
    assert (await rt.wait(run.id)).status == RunStatus.COMPLETED
