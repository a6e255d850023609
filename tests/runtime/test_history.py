"""A run's past from its step deltas: the state after any step and what that step changed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge import AppendOnlyList, Runtime
from kforge.agents.loop.prompts import ObservationReply
from kforge.engine.agent import StepOutcome
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.engine.state import apply_delta, diff_state
from kforge.errors import InvalidRunStateError
from kforge.frames import ModelCall, frame_from_dict, stamped
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel, ReplyFunction
from kforge.llm.types import Message
from kforge.runtime.history import call_prompt, step_seqs, step_state
from kforge.store.base import RunStatus, StepRecord
from kforge.store.memory import MemoryStore
from tests.agents.helpers import rebuilt_prompts
from tests.agents.helpers import runtime as react_runtime
from tests.agents.test_react import GOAL, call, observed
from tests.store.test_store import new_run, thinking

leaves = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)
states = st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3)


def _recorded(history: list[dict[str, Any]], frames_per_step: list[int]) -> MemoryStore:
    """A run whose step k (from 0) left ``history[k]``, committing ``frames_per_step[k]`` frames."""
    store = MemoryStore()
    store.create_run(new_run())
    seq, before = 0, {}
    for step, (after, count) in enumerate(zip(history, frames_per_step, strict=True)):
        frames = [thinking("r1", seq + i + 1) for i in range(count)]
        seq += count
        store.commit("r1", frames, step=StepRecord(step, seq, diff_state(before, after)))
        before = after
    return store


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(states, st.integers(1, 3)), min_size=1, max_size=5),
    st.data(),
)
def test_any_frame_shows_the_state_its_step_left_and_the_changes_from_the_step_before(
    steps: list[tuple[dict[str, Any], int]], data: st.DataObject
) -> None:
    history = [s for s, _ in steps]
    store = _recorded(history, [n for _, n in steps])
    ends = [seq for _, seq in step_seqs(store, "r1")]
    seq = data.draw(st.integers(1, ends[-1]))
    view = step_state(store, "r1", seq)
    index = next(i for i, end in enumerate(ends) if end >= seq)
    assert view.step == index and view.seq == ends[index]
    assert view.first_seq == (ends[index - 1] + 1 if index else 1) <= seq
    assert view.state == history[index]
    # replaying the changes on the state before gives the state after
    before = history[index - 1] if index else {}
    ops: list[list[Any]] = []
    for change in view.changes:
        if change.op == "set":
            ops.append(["s", change.path, change.after])
        elif change.op == "delete":
            ops.append(["d", change.path])
        else:
            ops.append(["a", change.path, change.after])
    assert apply_delta(dict(before), ops) == history[index]


def test_a_known_change_says_what_was_there_before() -> None:
    store = _recorded([{"n": 1, "log": ["a"]}, {"n": 2, "log": ["a", "b"]}], [2, 2])
    view = step_state(store, "r1", 3)
    assert [c.to_dict() for c in view.changes] == [
        {"op": "set", "path": ["n"], "before": 1, "after": 2},
        {"op": "append", "path": ["log"], "before": None, "after": ["b"]},
    ]


def test_a_run_without_a_step_says_to_wait_for_one() -> None:
    store = MemoryStore()
    store.create_run(new_run())
    with pytest.raises(InvalidRunStateError, match="no committed step yet"):
        step_state(store, "r1", 1)


# -- the prompt of a model call ----------------------------------------------------------------


def _react_reply(sent: list[list[Message]]) -> ReplyFunction:
    """A model for the ReAct agent that looks up the capital on every step, keeping each
    prompt it is sent in ``sent``."""

    def reply(messages: list[Message], info: CallInfo) -> Any:
        sent.append(list(messages))
        if info.output_schema is None:
            return "Paris."
        if info.output_schema == schema_for(ObservationReply):
            return observed("The result names Paris, not yet checked twice.", False)
        return call("France", "I need the capital, and to check it again")

    return reply


async def test_each_call_records_only_its_new_messages_so_the_log_grows_linearly() -> None:
    recorded: dict[int, int] = {}
    whole: dict[int, int] = {}
    for steps in (10, 40):
        sent: list[list[Message]] = []
        rt = react_runtime(FunctionModel(_react_reply(sent)))
        run = await rt.run("react", {"goal": GOAL, "max_steps": steps, "allow_ask": False})
        assert run.status == RunStatus.COMPLETED, run.error
        rebuilt, recorded[steps] = rebuilt_prompts(rt.store, run.id)
        assert rebuilt == sent  # every call's prompt is exactly what the model was sent
        whole[steps] = sum(len(json.dumps([m.to_dict() for m in p])) for p in sent)
    # four times the steps: about four times the bytes, where whole prompts take ten times
    assert recorded[40] <= 4.5 * recorded[10], recorded
    assert whole[40] >= 8 * whole[10], whole


def test_a_call_recorded_before_prompts_were_says_so_and_other_frames_are_refused() -> None:
    store = MemoryStore()
    store.create_run(new_run())
    old = frame_from_dict(
        {"type": "model.call", "model": "m", "response": {"text": "hi"}, "run_id": "r1", "seq": 1}
    )
    assert isinstance(old, ModelCall) and old.prompt_delta is None
    later = ModelCall(model="m", response={}, prompt_base=1, prompt_delta=([0, 1],))
    store.commit("r1", [old, stamped(later, "r1", 2), thinking("r1", 3)])
    assert not call_prompt(store, "r1", 1).recorded
    assert not call_prompt(store, "r1", 2).recorded  # its base holds no prompt
    with pytest.raises(InvalidRunStateError, match=r"'agent\.thinking' frame, not a model call"):
        call_prompt(store, "r1", 3)


class _Chat:
    """An agent as docs/python-api.md writes one: its history an ``AppendOnlyList`` of message
    records, read back into messages for each call; it asks the user after ``ask_at`` calls."""

    agent_type = "chat-history"

    def __init__(self, args: dict[str, Any]) -> None:
        self.history = AppendOnlyList([Message.user(args["question"]).to_dict()])
        self.ask_at = int(args["ask_at"])
        self.ask_twice = bool(args.get("ask_twice"))
        self.calls = 0

    async def step(self, ctx: RunContext) -> StepOutcome:
        if self.calls == self.ask_at:
            answer = await ctx.ask("Go on?")
            self.history.append(Message.user(str(answer)).to_dict())
        reply = await ctx.complete([Message.from_dict(m) for m in self.history], purpose="chat")
        if self.calls == self.ask_at and self.ask_twice:  # the same step asks again
            await ctx.ask("Sure?")
        self.history.append(Message.assistant(reply.text).to_dict())
        self.calls += 1
        return StepOutcome(done=self.calls >= 2 * self.ask_at, result={"text": reply.text})

    def get_state(self) -> dict[str, Any]:
        return {
            "history": self.history,
            "calls": self.calls,
            "ask_at": self.ask_at,
            "ask_twice": self.ask_twice,
        }

    def restore_state(self, state: dict[str, Any]) -> None:
        self.history = AppendOnlyList(state["history"])
        self.calls, self.ask_at = int(state["calls"]), int(state["ask_at"])
        self.ask_twice = bool(state["ask_twice"])


async def test_a_resumed_run_records_the_history_it_restored_as_copies_of_it() -> None:
    """The first call after a resume sends the whole restored history again: its frame copies
    the state's records instead of writing them again, and the prompt rebuilt from it is what
    the model was sent; every later call is a delta against the one before, as usual."""
    sent: list[list[Message]] = []

    def reply(messages: list[Message], info: CallInfo) -> str:
        sent.append(list(messages))
        return f"reply {len(sent)}: " + "words of a long answer " * 8

    agents = AgentRegistry()
    agents.register(_Chat.agent_type, _Chat)
    store = MemoryStore()
    rt = Runtime(store, model=FunctionModel(reply), registry=agents)
    run = await rt.run(_Chat.agent_type, {"question": "Tell me a story.", "ask_at": 12})
    assert run.status == RunStatus.AWAITING_USER, run.error
    await rt.resume(run.id, "yes")
    done = await rt.wait(run.id)
    assert done.status == RunStatus.COMPLETED, done.error
    calls = [f for f in store.read_frames(run.id) if isinstance(f, ModelCall)]
    first = calls[12]  # the first call of the resumed stretch
    assert first.prompt_base == 0 and first.prompt_state is not None
    assert first.prompt_state["path"] == ["agent", "history"]
    assert first.prompt_delta is not None and first.prompt_delta[0] == [0, 13]
    assert all(f.prompt_state is None for f in calls if f is not first)
    rebuilt, _ = rebuilt_prompts(store, run.id)
    assert rebuilt == sent
    whole = len(json.dumps([m.to_dict() for m in sent[12]]))
    assert len(json.dumps(first.prompt_delta)) * 10 < whole


async def test_a_re_executed_step_rebuilds_a_call_recorded_against_the_restored_history() -> None:
    """The first call of a resumed stretch (recorded as copies of the restored history) is
    followed in the same step by a question: the next resume re-executes the step and replays
    that call, and the next step's call is a delta against it, not the history again."""
    sent: list[list[Message]] = []

    def reply(messages: list[Message], info: CallInfo) -> str:
        sent.append(list(messages))
        return f"reply {len(sent)}"

    agents = AgentRegistry()
    agents.register(_Chat.agent_type, _Chat)
    store = MemoryStore()
    rt = Runtime(store, model=FunctionModel(reply), registry=agents)
    args = {"question": "Tell me a story.", "ask_at": 3, "ask_twice": True}
    run = await rt.run(_Chat.agent_type, args)
    assert run.status == RunStatus.AWAITING_USER
    await rt.resume(run.id, "yes")  # the step calls the model, then asks again
    assert (await rt.wait(run.id)).status == RunStatus.AWAITING_USER
    again = Runtime(store, model=FunctionModel(reply), registry=agents)
    await again.resume(run.id, "sure")  # the step runs again: its call is replayed
    done = await again.wait(run.id)
    assert done.status == RunStatus.COMPLETED, done.error
    assert len(sent) == 6  # no call was sent twice
    calls = [f for f in store.read_frames(run.id) if isinstance(f, ModelCall)]
    restored, after = calls[3], calls[4]
    assert restored.prompt_state is not None
    assert after.prompt_base == restored.seq and after.prompt_state is None
    assert rebuilt_prompts(store, run.id)[0] == sent
