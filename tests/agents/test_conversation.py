"""Conversation turns: from args, from a session in the store, and as prompt text."""

from __future__ import annotations

import pytest

from kforge.agents.conversation import (
    Turn,
    folded_question,
    format_history,
    is_short,
    refers_back,
    topic,
    turns_from_args,
)
from kforge.errors import ValidationError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime.services import session_turns
from tests.agents.helpers import runtime
from tests.agents.test_router import corpus_store

GREETING = [{"reason": "A greeting.", "in_scope": True}]


async def test_session_turns_are_the_completed_router_runs_in_order() -> None:
    store = corpus_store()
    model = ScriptedModel([*GREETING, "Hello!", *GREETING, "Hi again!"])
    rt = runtime(model, store=store)
    for question in ("Hello", "Hello again"):
        await rt.run("router", {"question": question, "corpus": "ml"}, session_id="s")
    turns = turns_from_args(session_turns(store, "s"))
    assert turns == [Turn("Hello", "Hello!"), Turn("Hello again", "Hi again!")]
    assert session_turns(store, "other") == []


def test_turns_from_args_are_checked() -> None:
    assert turns_from_args([{"question": "q", "answer": "a"}]) == [Turn("q", "a")]
    with pytest.raises(ValidationError, match="must be a list"):
        turns_from_args("q")
    with pytest.raises(ValidationError, match="'question' and 'answer'"):
        turns_from_args([{"question": 1}])


def test_history_shows_the_latest_turns_with_short_answers() -> None:
    turns = [Turn(f"q{i}", "word " * 400) for i in range(8)]
    text = format_history(turns, max_turns=2)
    assert text.startswith("Conversation so far:\nUser: q6")
    assert "q5" not in text and text.count("Assistant:") == 2
    assert len(text) < 1400
    assert format_history([]) == ""


@pytest.mark.parametrize(
    "question",
    [
        "Is it thread safe?",
        "What does this function return?",
        "How do I stop it?",
        "And on Windows?",
        "What about the synchronous version?",
        "how about streams",
        "Why?",
    ],
)
def test_questions_that_refer_back(question: str) -> None:
    assert refers_back(question)


@pytest.mark.parametrize(
    "question",
    [
        "How do I delete a file?",
        "What does os.EOL contain?",
        "What is the function that reads a file line by line?",
        "Which module handles paths on Windows?",
    ],
)
def test_standalone_questions(question: str) -> None:
    assert not refers_back(question)


def test_short_questions_and_folding() -> None:
    assert is_short("What is the default?") and is_short("How do I delete a file?")
    assert not is_short("How do I read a large file line by line without blocking the loop?")
    turns = [Turn("What is highWaterMark?", "A limit.")]
    assert folded_question("And the default?", turns) == "What is highWaterMark? And the default?"
    assert folded_question("And the default?", []) == "And the default?"
    # a follow-up of a follow-up keeps the topic they share
    turns.append(Turn("And for writable streams?", "Also a limit."))
    assert topic(turns) == "What is highWaterMark? And for writable streams?"
    assert folded_question("Is it the same?", turns).startswith("What is highWaterMark? And")
    assert topic([Turn("How do I delete a file?", "…"), Turn("What is os.EOL?", "…")]) == (
        "What is os.EOL?"
    )
