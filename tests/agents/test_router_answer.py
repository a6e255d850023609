"""Citations in the router's answers name only the passages it was given (graded relevant)."""

from __future__ import annotations

from kforge.agents.router_answer import answer_messages, attach_citations
from kforge.rag.types import Chunk


def chunk(n: int) -> Chunk:
    text = f"Passage {n} text."
    return Chunk(f"c{n}", f"/d/f{n}.md", f"f{n}.md", f"T{n}", "", None, 0, len(text), text)


def test_markers_that_name_no_passage_are_removed() -> None:
    answer, citations = attach_citations("A [2] and B [9] and [1][2].", [chunk(1), chunk(2)])
    assert answer == "A [2] and B and [1][2]."
    assert [(c.number, c.file) for c in citations] == [(2, "f2.md"), (1, "f1.md")]


def test_an_answer_citing_nothing_lists_the_passages_it_was_given() -> None:
    _, citations = attach_citations("Plain answer.", [chunk(1)])
    assert [c.chunk_id for c in citations] == ["c1"]
    assert attach_citations("No sources [1].", []) == ("No sources.", [])


def test_the_prompt_numbers_the_passages_and_carries_the_history() -> None:
    [system, user] = answer_messages("Q?", "Conversation so far:\nUser: hi", [chunk(1)])
    assert "[1] (f1.md, chars 0-15)\nPassage 1 text." in user.content
    assert user.content.startswith("Conversation so far:") and user.content.endswith("Question: Q?")
    assert "square brackets" in system.content
