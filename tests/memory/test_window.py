"""The context window: grounding first, token accounting, the 80 % threshold, round trips."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.errors import ConfigurationError, ValidationError
from kforge.memory.window import (
    ContextEntry,
    ContextWindow,
    GroundingSection,
    approximate_tokens,
)

texts = st.text(max_size=200)
kinds = st.sampled_from(["user", "assistant", "tool", "observation", "summary"])
datetimes = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
groundings = st.builds(
    GroundingSection,
    current_goal=texts,
    completed_subtasks=st.lists(texts, max_size=4).map(tuple),
    key_decisions=st.lists(texts, max_size=4).map(tuple),
    user_preferences=st.dictionaries(st.text(max_size=10), texts, max_size=4).map(
        lambda d: tuple(d.items())
    ),
)
entries = st.builds(
    ContextEntry,
    kind=kinds,
    content=texts,
    token_count=st.integers(0, 10_000),
    timestamp=datetimes,
    compacted=st.booleans(),
    name=st.none() | st.text(max_size=12),
)


def test_approximate_tokens_is_a_ceiling_of_a_quarter_of_the_characters() -> None:
    assert approximate_tokens("") == 0
    assert approximate_tokens("abc") == 1
    assert approximate_tokens("abcd") == 1
    assert approximate_tokens("abcde") == 2


def test_entries_are_counted_with_the_injected_counter() -> None:
    window = ContextWindow.create("find the answer", 1000, count_tokens=lambda t: len(t.split()))
    entry = window.add("user", "three short words")
    assert entry.token_count == 3
    assert window.history_tokens == 3
    assert window.token_count == window.grounding_tokens + 3
    assert window.grounding_tokens == len(window.grounding.render().split())


def test_needs_compaction_only_past_eighty_percent_of_the_window() -> None:
    window = ContextWindow.create("g", 100, count_tokens=len)
    base = window.token_count
    window.add("user", "x" * (80 - base))
    assert window.token_count == 80
    assert not window.needs_compaction()
    window.add("assistant", "y")
    assert window.needs_compaction()


def test_needs_compaction_counts_what_is_sent_along_with_the_context() -> None:
    window = ContextWindow.create("g", 100, count_tokens=len)
    window.add("user", "x" * (60 - window.token_count))
    assert not window.needs_compaction(overhead=20)
    assert window.needs_compaction(overhead=21)  # a system prompt and tools of 21 tokens


def test_serialize_puts_the_grounding_first_and_keeps_every_part() -> None:
    window = ContextWindow.create("summarise the report", 10_000)
    window.add("user", "please summarise")
    window.add("tool", "42 pages", name="read_pdf")
    window.complete_subtask("read the report")
    window.record_decision("use the executive summary")
    window.set_preference("tone", "formal")
    window.set_preference("tone", "casual")
    text = window.serialize()
    assert text.startswith("<grounding>\nCurrent goal: summarise the report")
    assert text.index("</grounding>") < text.index("<history>")
    for part in ("- read the report", "- use the executive summary", "- tone: casual"):
        assert part in text
    assert "tone: formal" not in text
    assert "[tool:read_pdf] 42 pages" in text


def test_to_messages_starts_with_a_system_message_holding_the_grounding() -> None:
    window = ContextWindow.create("goal", 10_000)
    window.add("user", "hi")
    window.add("tool", "result", name="search")
    window.add("observation", "looks right")
    messages = window.to_messages("You are helpful.")
    assert messages[0].role == "system"
    assert messages[0].content.startswith("You are helpful.\n\n<grounding>")
    assert [m.role for m in messages[1:]] == ["user", "user", "assistant"]
    assert messages[2].content == "Tool result (search): result"


@settings(max_examples=150)
@given(groundings, st.lists(entries, max_size=6), st.integers(1, 10**6), st.floats(0.05, 1.0))
def test_to_dict_round_trips_exactly_through_json(
    grounding: GroundingSection, history: list[ContextEntry], max_tokens: int, threshold: float
) -> None:
    window = ContextWindow(grounding, max_tokens=max_tokens, history=history, threshold=threshold)
    restored = ContextWindow.from_dict(json.loads(json.dumps(window.to_dict())))
    assert restored == window
    assert restored.token_count == window.token_count
    assert restored.serialize() == window.serialize()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 99}, "unsupported format version 99"),
        ({"history": "nope"}, "needs a 'grounding' object and a 'history' list"),
        (
            {"history": [{"kind": "shout", "content": "", "token_count": 0}]},
            r"history entry does not fit: Invalid enum value 'shout' - at `\$\[0\]\.kind`",
        ),
        (
            {"history": [{"kind": "user", "content": "x", "token_count": 1, "timestamp": "soon"}]},
            r"Invalid RFC3339 encoded datetime - at `\$\[0\]\.timestamp`",
        ),
        ({"grounding": {"current_goal": 3}}, "'current_goal' must be a string"),
    ],
)
def test_from_dict_says_what_is_wrong(change: dict[str, object], message: str) -> None:
    data = ContextWindow.create("g", 100).to_dict() | change
    with pytest.raises(ValidationError, match=message):
        ContextWindow.from_dict(data)


def test_invalid_window_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="max_tokens must be the model's window size"):
        ContextWindow.create("g", 0)
    with pytest.raises(ConfigurationError, match="threshold must be a share"):
        ContextWindow.create("g", 100, threshold=1.5)
    with pytest.raises(ValidationError, match="kind must be one of"):
        ContextWindow.create("g", 100).add("robot", "hi")  # type: ignore[arg-type]
