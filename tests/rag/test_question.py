"""What a question asks to define."""

from __future__ import annotations

from kforge.rag.question import defined_subject, read_question, unit_terms


def test_a_short_what_is_question_names_its_subject() -> None:
    assert defined_subject(read_question("What is a deque?")) == unit_terms("deque")
    assert defined_subject(read_question("What is the index in Git?")) == unit_terms("index")
    assert defined_subject(read_question("What are named tuples?")) == unit_terms("named tuples")


def test_a_long_what_question_asks_for_a_name_not_a_definition() -> None:
    question = read_question("What is the name of the stadium where the team played in 1990?")
    assert defined_subject(question) == frozenset()
    assert defined_subject(read_question("How do I delete a branch?")) == frozenset()
