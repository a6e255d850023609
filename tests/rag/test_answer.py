from __future__ import annotations

from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.agentic import RAGConfig, RAGResult
from kforge.rag.answer import answer_from_result, answer_question
from kforge.rag.grading import GradedResult
from kforge.rag.types import SearchHit
from tests.rag.helpers import make_hit

REL = {"relevance": "relevant", "confidence": 0.9, "reasoning": "yes"}
NOT = {"relevance": "not_relevant", "confidence": 0.9, "reasoning": "no"}


def _search(hits: list[SearchHit]):  # type: ignore[no-untyped-def]
    return lambda query, k: hits[:k]


async def test_answer_cites_only_relevant_passages_and_drops_bad_markers() -> None:
    hits = [make_hit(0, "ReAct mixes thoughts and actions.", file="react.md"), make_hit(1)]
    with ScriptedModel([REL, NOT, "ReAct mixes thoughts and actions [1][2][7]."]) as model:
        answer = await answer_question(
            "What is ReAct?", _search(hits), model.complete, config=RAGConfig(k=2)
        )
    # the only sentence is the whole short answer: said once
    assert answer.text == "ReAct mixes thoughts and actions [1]."
    assert answer.short_answer == "ReAct mixes thoughts and actions"
    assert [(c.number, c.chunk_id, c.file) for c in answer.citations] == [(1, "c0", "react.md")]
    assert not answer.fallback_used and answer.disclaimer is None
    prompt = model.calls[-1].messages[-1].content
    assert "[1] (Doc)\nReAct mixes thoughts and actions." in prompt and "passage 1" not in prompt
    markdown = answer.to_markdown()
    assert "Sources:" in markdown and "[1] react.md § Doc > Part 0" in markdown


async def test_an_answer_its_passages_do_not_support_is_replaced_by_their_sentences() -> None:
    hits = [make_hit(0, "ReAct mixes thoughts and actions in one loop.", file="react.md")]
    invented = "ReAct controls the amount of dopamine in the brain [1]."
    with ScriptedModel([REL, invented, invented]) as model:
        answer = await answer_question("What is ReAct?", _search(hits), model.complete)
    assert answer.text == "ReAct mixes thoughts and actions in one loop [1]."
    assert answer.to_dict()["short_answer"] == answer.short_answer != ""
    assert [c.file for c in answer.citations] == ["react.md"]


async def test_fallback_answer_is_model_only_with_a_disclaimer() -> None:
    result = RAGResult("q", (), ("q", "q2", "q3"), fallback_used=True, disclaimer="Not grounded.")
    with ScriptedModel(["It is probably X [1]."]) as model:
        answer = await answer_from_result("q", result, model.complete)
    assert answer.fallback_used and answer.citations == ()
    assert answer.text == "It is probably X."
    assert answer.disclaimer == "Not grounded."
    assert "> Not grounded." in answer.to_markdown()
    assert "Sources:" not in model.calls[0].messages[-1].content


async def test_a_result_without_passages_always_gets_a_disclaimer() -> None:
    result = RAGResult("q", (), ("q",))
    with ScriptedModel(["guess"]) as model:
        answer = await answer_from_result("q", result, model.complete)
    assert answer.fallback_used and answer.disclaimer and "model alone" in answer.disclaimer


async def test_unverified_passages_are_used_but_not_cited() -> None:
    result = RAGResult(
        "q", (), ("q",), disclaimer="could not be checked", unverified_results=(make_hit(0),)
    )
    with ScriptedModel(["From the passage [1]."]) as model:
        answer = await answer_from_result("q", result, model.complete)
    assert answer.citations == () and not answer.fallback_used
    assert "Unverified passages:" in answer.to_markdown()


def test_graded_result_round_trips() -> None:
    graded = GradedResult(make_hit(3), "relevant", 0.5, "why", graded=False)
    assert GradedResult.from_dict(graded.to_dict()) == graded
