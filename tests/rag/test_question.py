"""What a question asks: the items it compares, and the kind of question it is."""

from __future__ import annotations

import pytest

from kforge.rag.question import read_question


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
