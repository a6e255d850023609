"""A prompt as changes to an earlier one: exact for any two prompts, small when the second
grows from the first, and a re-executed call's prompt rebuilt from what was recorded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kforge import AppendOnlyList
from kforge.frozen import freeze
from kforge.llm.prompt_delta import PromptLog, apply_prompt_delta, delta_fresh, prompt_delta
from kforge.llm.types import Message
from tests.llm.test_types import messages

prompts = st.lists(messages, max_size=8)
long_texts = st.text(min_size=0, max_size=300)


@given(prompts, prompts)
def test_any_prompt_is_rebuilt_exactly_from_any_base(
    base: list[Message], prompt: list[Message]
) -> None:
    ops = prompt_delta(base, prompt)
    assert apply_prompt_delta(base, json.loads(json.dumps(ops))) == prompt
    assert len(delta_fresh(ops)) == len(prompt)


@given(prompts, st.lists(st.sampled_from(["copy", "edit", "drop", "add"]), max_size=8), long_texts)
def test_a_prompt_grown_from_its_base_records_only_what_changed(
    base: list[Message], changes: list[str], text: str
) -> None:
    """Kept messages are copies, a message changed in its middle is an edit that keeps its
    ends, and a dropped message costs nothing: the delta holds only the new text."""
    head, tail = "h" * 70, "t" * 70
    base = [Message.system(head + "old" + tail), *base]
    prompt = [Message.system(head + text + tail)]
    for message, change in zip(base[1:], changes, strict=False):
        if change == "copy":
            prompt.append(message)
        elif change == "add":
            prompt.extend([message, Message.user(text)])
    ops = prompt_delta(base, prompt)
    assert apply_prompt_delta(base, ops) == prompt
    # the ends kept are at least the unchanged ones (more when the new text starts or ends
    # like the old middle did)
    edit = ops[0]
    assert edit["edit"] == 0 and edit["head"] >= len(head) and edit["tail"] >= len(tail)
    assert len(edit["content"]) <= len(text)
    new_text = sum(len(op["content"]) for op in ops if isinstance(op, dict))
    added = changes[: len(base) - 1].count("add")
    assert new_text <= len(text) + added * len(f"added {text}")


def test_a_compacted_prompt_copies_what_it_kept_around_the_summary() -> None:
    system = Message.system("You are careful. " * 10)
    history = [Message.user(f"turn {n} " * 20) for n in range(6)]
    base = [system, *history, Message.user("Step 7.")]
    summary = Message.user("Summary of earlier context: turns 0 to 3.")
    prompt = [system, summary, *history[4:], Message.user("Step 8.")]
    ops = prompt_delta(base, prompt)
    assert ops == ([0, 1], summary.to_dict(), [5, 7], Message.user("Step 8.").to_dict())
    assert apply_prompt_delta(base, ops) == prompt
    assert delta_fresh(ops) == [False, True, False, False, True]


def test_a_lone_surrogate_is_recorded_as_a_question_mark() -> None:
    prompt = [Message.user("bad \ud800 text")]
    ops = prompt_delta([], prompt)
    json.dumps(ops).encode()  # storable
    assert apply_prompt_delta([], ops) == [Message.user("bad ? text")]


@pytest.mark.parametrize(
    ("ops", "says"),
    [
        ([[0, 3]], "copies messages 0-2 of a base prompt of 2 messages"),
        ([{"edit": 5, "head": 0, "tail": 0, "content": ""}], "edits message 5"),
        ([{"edit": 0, "head": 90, "tail": 0, "content": ""}], "keeps 90 characters"),
        ([[2, 1]], "bad copy range"),
        (["text"], "is not a copy, an edit or a message"),
    ],
)
def test_a_delta_that_does_not_fit_its_base_is_refused(ops: list[object], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        apply_prompt_delta([Message.system("a"), Message.user("b")], ops)


def test_the_log_bases_each_purpose_on_its_last_call_and_rebuilds_replayed_ones() -> None:
    log = PromptLog()
    first = [Message.system("s" * 100), Message.user("q")]
    assert log.delta("decide", first) == (0, tuple(m.to_dict() for m in first), None)
    log.sent("decide", 3, first)
    second = [*first, Message.assistant("a")]
    assert log.delta("decide", second) == (
        3,
        ([0, 2], {"role": "assistant", "content": "a"}),
        None,
    )
    assert log.delta("observe", second)[0] == 0  # another conversation
    # a re-executed step: the recorded call's prompt (not what the step sends now) is the base
    replayed = PromptLog()
    replayed.sent("decide", 3, [Message.system("something else")])
    replayed.replayed("decide", 3, 0, prompt_delta([], first))
    replayed.replayed("decide", 7, 3, prompt_delta(first, second))
    assert replayed.delta("decide", second) == (7, ([0, 3],), None)
    # a recorded call whose base this process never saw: the purpose starts over
    replayed.replayed("decide", 9, 5, ([0, 1],))
    assert replayed.delta("decide", second)[0] == 0
    replayed.replayed("decide", 11, 0, None)  # a frame that holds no prompt
    assert replayed.delta("decide", second)[0] == 0


@given(prompts, prompts, st.booleans(), st.booleans())
def test_the_base_is_the_prompt_as_sent_whatever_the_caller_does_to_its_list_later(
    first: list[Message], more: list[Message], sent_as_list: bool, next_as_list: bool
) -> None:
    """An agent sends its history and keeps appending to that same list: the next call's delta
    holds only what was appended, whether either prompt came as a list or a tuple."""
    log = PromptLog()
    history = [Message.system("s"), *first]
    log.sent("loop", 1, history if sent_as_list else tuple(history))
    size = len(history)
    history.extend(more)
    prompt = history if next_as_list else tuple(history)
    base, ops, _ = log.delta("loop", prompt)
    assert base == 1
    assert ops[0] == [0, size] and len(ops) == 1 + len(more)
    assert apply_prompt_delta(history[:size], ops) == list(prompt)


@given(prompts)
def test_messages_read_from_frozen_records_are_recorded_as_those_records(
    prompt: list[Message],
) -> None:
    """A restored history (an ``AppendOnlyList``'s frozen items, read back into messages) is
    recorded by the first call of a stretch without writing each message again; any other
    message as ``to_dict`` writes it. Either way the record rebuilds the same prompt."""
    records = [freeze(m.to_dict()) for m in prompt]
    restored = [Message.from_dict(r) for r in records]
    fresh = Message.user("a message built in code")
    ops = prompt_delta((), [*restored, fresh])
    storable = [
        r for r in records if r["content"] == r["content"].encode("utf-8", "replace").decode()
    ]
    assert [op for op in ops[:-1] if any(op is r for r in records)] == storable
    assert ops[-1] == fresh.to_dict() and type(ops[-1]) is dict
    assert apply_prompt_delta((), json.loads(json.dumps(ops))) == [*prompt, fresh]


def test_a_frozen_record_whose_content_the_log_cannot_keep_is_written_anew() -> None:
    record = freeze(Message.user("bad \udc80 text").to_dict())
    ops = prompt_delta((), [Message.from_dict(record), Message.from_dict(dict(record))])
    assert ops[0] is not record and ops[0] == {"role": "user", "content": "bad ? text"}
    assert ops[1] == ops[0] and ops[1] is not record


def test_a_stretch_records_its_restored_history_as_copies_of_the_states_records() -> None:
    """A resumed stretch's first call sends the history it restored (messages read back from
    an ``AppendOnlyList``'s records): the delta copies those records by position, writes what
    is new, and rebuilds the prompt from the list the state holds."""
    records = AppendOnlyList([Message.user(f"message {n}").to_dict() for n in range(6)])
    restored = [Message.from_dict(r) for r in records]
    log = PromptLog()
    log.restored(40, [(["agent", "history"], records)])
    records.append(Message.user("appended after the restore").to_dict())  # not the step's
    prompt = [Message.system("be brief"), *restored[:4], Message.user("new"), *restored[4:]]
    base, ops, state = log.delta("chat", prompt)
    assert (base, state) == (0, {"step": 40, "path": ["agent", "history"]})
    assert ops == (
        {"role": "system", "content": "be brief"},
        [0, 4],
        {"role": "user", "content": "new"},
        [4, 6],
    )
    state_list = [Message.from_dict(r) for r in list(records)[:6]]
    assert apply_prompt_delta(state_list, json.loads(json.dumps(ops))) == prompt
    # the usual prompt, the history sent again in order, then what is new
    usual = [Message.system("be brief"), *restored, Message.user("new")]
    assert log.delta("usual", usual)[1] == (
        {"role": "system", "content": "be brief"},
        [0, 6],
        {"role": "user", "content": "new"},
    )
    # a prompt that sends none of the records is recorded whole, as before
    assert log.delta("other", [Message.user("hi")]) == (
        0,
        ({"role": "user", "content": "hi"},),
        None,
    )
    # a re-executed step rebuilds the recorded call's prompt from the same restored list
    again = PromptLog()
    again.restored(40, [(["agent", "history"], records)])
    again.replayed("chat", 9, 0, ops, {"step": 40, "path": ["agent", "history"]})
    assert again.delta("chat", [*prompt, Message.user("next")])[:2] == (
        9,
        ([0, len(prompt)], {"role": "user", "content": "next"}),
    )
    # ... but not from a list it did not restore: the purpose starts over
    other = PromptLog()
    other.replayed("chat", 9, 0, ops, {"step": 41, "path": ["agent", "history"]})
    assert other.delta("chat", prompt)[0] == 0


class _Watched(AppendOnlyList):
    """A history that counts the copies made of its first messages."""

    __slots__ = ()
    copies = 0

    def __getitem__(self, key: object) -> object:
        if isinstance(key, slice) and not key.start:
            type(self).copies += 1
        return super().__getitem__(key)  # type: ignore[index]


def test_a_prompt_that_only_grows_is_based_on_its_last_call_without_a_copy() -> None:
    first = [Message.system("s"), Message.user("q")]
    added = [Message.assistant("a"), Message.tool("2", "c1", "add")]
    history = _Watched(first)
    log = PromptLog()
    log.sent("loop", 3, history, grows=True)
    history.extend(added)
    seq, ops, _ = log.delta("loop", history)
    log.sent("loop", 5, history, grows=True)
    again = log.delta("loop", history)[1]
    assert _Watched.copies == 0
    assert (seq, ops) == (3, ([0, 2], *(m.to_dict() for m in added)))
    assert apply_prompt_delta(first, ops) == [*first, *added]
    assert again == ([0, 4],)
    # a re-executed step rebuilds the last prompt as it was, not as the list is now
    log.replayed("loop", 7, 5, ([0, 3],))
    later = Message.assistant("b")
    history.append(later)
    assert log.delta("loop", history)[:2] == (7, ([0, 3], added[1].to_dict(), later.to_dict()))
