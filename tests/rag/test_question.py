"""What a question asks: the subject it asks to define, the items it compares."""

from __future__ import annotations

import pytest

from kforge.rag.question import (
    defined_subject,
    defines_subject,
    opens_with_subject,
    read_question,
    unit_terms,
)


def test_a_short_what_is_question_names_its_subject() -> None:
    assert defined_subject(read_question("What is a deque?")) == unit_terms("deque")
    assert defined_subject(read_question("What is the index in Git?")) == unit_terms("index")
    assert defined_subject(read_question("What are named tuples?")) == unit_terms("named tuples")


def test_a_long_what_question_asks_for_a_name_not_a_definition() -> None:
    question = read_question("What is the name of the stadium where the team played in 1990?")
    assert defined_subject(question) == frozenset()
    assert defined_subject(read_question("How do I delete a branch?")) == frozenset()


def test_a_sentence_opens_with_its_subject_past_an_article_and_emphasis() -> None:
    subject = defined_subject(read_question("What is a checkpoint?"))
    assert opens_with_subject("The word **checkpoint** is used in two senses.", subject)
    assert opens_with_subject("checkpoint: a point where a person reviews the run", subject)
    assert not opens_with_subject("Otherwise, the checkpoint is skipped.", subject)


def test_a_sentence_defines_its_subject_when_it_says_what_it_is() -> None:
    subject = defined_subject(read_question("What is a Counter?"))
    assert defines_subject("A Counter is a dict subclass for counting objects.", subject) == 1.0
    assert defines_subject("A counter tool is provided for rapid tallies.", subject) == 0.6
    assert defines_subject("Changed in version 3.7: a Counter keeps order.", subject) == 0.0
    # a summary table's row whose first cell is the subject says what it is
    assert defines_subject("Counter | dict subclass for counting hashable objects", subject) == 1.0
    assert defines_subject("deque | list-like container with fast appends", subject) == 0.0


@pytest.mark.parametrize(
    ("question", "items"),
    [
        (
            "What is the difference between a shallow copy and a deep copy?",
            ("shallow copy", "deep copy"),
        ),
        ("How does fs.stat differ from fs.lstat?", ("fs.stat", "fs.lstat")),
        ("How is msgmerge different from msgcat?", ("msgmerge", "msgcat")),
        ("Compare git merge and git rebase", ("git merge", "git rebase")),
        ("spawn vs exec?", ("spawn", "exec")),
    ],
)
def test_a_comparison_names_its_two_items_however_it_is_asked(
    question: str, items: tuple[str, str]
) -> None:
    asked = read_question(question)
    assert asked.kind == "comparison"
    assert asked.options == items


def test_when_should_i_asks_in_what_case_and_two_ways_are_compared() -> None:
    both = read_question("When should I skip a test and when should I mark it xfail?")
    assert both.kind == "comparison" and both.options == ("skip", "xfail")
    assert read_question("When should I use a fixture?").kind != "when"
    assert read_question("When was the first release published?").kind == "when"
    ways = read_question("Should I configure my spider with spider arguments or with settings?")
    assert ways.kind == "comparison" and ways.options == ("spider arguments", "settings")
