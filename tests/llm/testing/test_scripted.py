"""The scripted model's usage: its prompt estimate is the joined contents' length over four,
counted once per message of a conversation that grows from call to call."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message


def _estimate(prompt: list[Message]) -> int:
    text = "".join(m.content for m in prompt)
    return max(1, len(text) // 4) if text else 0


_POOL = [Message.user(""), Message.user("hello"), Message.assistant("a longer answer, " * 3)]


@given(
    st.lists(
        st.tuples(st.booleans(), st.lists(st.sampled_from(_POOL), max_size=4)),
        min_size=1,
        max_size=6,
    )
)
def test_for_any_prompts_the_estimate_is_that_of_the_joined_contents(
    calls: list[tuple[bool, list[Message]]],
) -> None:
    model = ScriptedModel(["ok"] * len(calls))
    prompt: list[Message] = []
    for grows, messages in calls:
        # a conversation sent again with more messages, or another prompt altogether
        prompt = [*prompt, *messages] if grows else messages
        response = asyncio.run(model.complete(prompt))
        assert response.usage.input_tokens == _estimate(prompt)


class _Counted(Message):
    """A message that counts how often its content is read."""

    __slots__ = ()
    reads = 0

    @property  # type: ignore[misc]
    def content(self) -> str:
        type(self).reads += 1
        return Message.__dict__["content"].__get__(self)


async def test_a_conversation_sent_again_has_only_its_new_messages_counted() -> None:
    history = [_Counted("user", f"message {i}") for i in range(50)]
    model = ScriptedModel(["one", "two"])
    await model.complete(history)
    _Counted.reads = 0
    history.append(_Counted("assistant", "one"))
    response = await model.complete(history)
    assert _Counted.reads == 1
    assert response.usage.input_tokens == _estimate(history)
