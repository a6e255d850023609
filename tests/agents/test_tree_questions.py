"""What the tree agent may ask and hand to a subagent (``kforge.agents.tree.questions``), for
any text a model may write."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kforge.agents.tree.questions import (
    asked_question,
    explicit_parts,
    restates,
    same_task,
    task_text,
)

VOCABULARY = "the budget is what how many guests which date party venue 100,000 and a ? . ; do"
WORDS = st.sampled_from(VOCABULARY.split())
WH = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
TEXT = st.lists(WORDS, max_size=14).map(" ".join) | st.text(max_size=60)


@given(TEXT)
def test_a_question_is_the_models_own_words_with_at_most_a_question_mark_added(
    text: str,
) -> None:
    question = asked_question(text)
    if question:
        assert question.endswith("?") and question.count("?") == 1
        assert question.rstrip("?").rstrip(".!:;, ") in " ".join(text.split())


@given(TEXT)
def test_a_statement_with_a_question_mark_added_is_not_a_question(text: str) -> None:
    rest = " ".join(w for w in text.replace("?", "").split() if w.lower() not in WH)
    statement = f"The budget is {rest}"
    assert asked_question(statement) == "" and asked_question(statement + "?") == ""


@given(TEXT, st.integers(min_value=0, max_value=4))
def test_a_request_is_split_only_into_parts_it_names(text: str, limit: int) -> None:
    parts = explicit_parts(text, limit)
    assert len(parts) <= limit and all(task_text(p) == p for p in parts)
    if not any(mark in text for mark in ";?\n"):
        assert parts == []


def test_the_parts_a_request_names() -> None:
    assert explicit_parts("Compare A with B; explain closures; and how to install Go", 4) == [
        "Compare A with B",
        "Explain closures",
        "How to install Go",
    ]
    assert explicit_parts("Plan:\n- choose a venue\n- pick a caterer", 4) == [
        "Choose a venue",
        "Pick a caterer",
    ]
    assert explicit_parts("What is a closure? How do I install Go?", 4) == [
        "What is a closure?",
        "How do I install Go?",
    ]
    assert explicit_parts("Plan my birthday party", 4) == []


def test_subquestions_that_differ_in_one_word_are_different_tasks() -> None:
    party = "Plan my birthday party"
    paris, london = "What does a venue cost in Paris?", "What does a venue cost in London?"
    assert not same_task(paris, london, party)
    assert same_task("What food should we serve?", "What food should we serve at the party?", party)
    assert restates("How do I plan my birthday party?", party)
    assert not restates("What food should we serve at my birthday party?", party)


@given(TEXT, TEXT)
def test_a_subquestion_is_the_same_task_as_itself_and_symmetric(one: str, other: str) -> None:
    request = "Plan my birthday party"
    assert same_task(one, one, request)
    assert same_task(one, other, request) == same_task(other, one, request)
