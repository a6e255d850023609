"""What the Research agent writes from document titles: plain questions, not templates."""

from __future__ import annotations

import pytest

from kforge.agents.common.writing import question_from_title, usable_frontier_question


@pytest.mark.parametrize(
    ("title", "question"),
    [
        ("Memory in Agent Systems", "What is memory in agent systems?"),
        ("Agent Architectures: An Overview", "What are agent architectures?"),
        ("BM25 and Lexical Search", "What are BM25 and lexical search?"),
        ("The ReAct Pattern", "What is the ReAct pattern?"),
        ("Kinds of interaction", "What are kinds of interaction?"),
        ("Designing Tools for Agents", "What should I know about designing tools for agents?"),
        ("Why approval matters", "Why approval matters?"),
        ("", ""),
    ],
)
def test_a_title_becomes_a_plain_question(title: str, question: str) -> None:
    assert question_from_title(title) == question


def test_frontier_questions_need_a_topic_and_no_echo() -> None:
    instructions = "List up to 4 adjacent questions worth exploring next, each with one sentence."
    assert usable_frontier_question("How do agents plan over long horizons?", instructions)
    assert not usable_frontier_question("What is it?", instructions)
    assert not usable_frontier_question(
        "Which adjacent questions worth exploring next?", instructions
    )
