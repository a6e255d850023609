from __future__ import annotations

import pytest

from kforge.errors import ModelOutputError, ModelUnavailableError, ScriptedModelError
from kforge.llm.structured import schema_for
from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.grading import Grade, grade_results
from tests.rag.helpers import FakeComplete, make_hit


def _grade(relevance: str, confidence: float = 0.9, why: str = "because") -> dict[str, object]:
    return {"relevance": relevance, "confidence": confidence, "reasoning": why}


async def test_each_hit_gets_one_grade_in_order() -> None:
    hits = [make_hit(0, "ReAct interleaves reasoning and acting"), make_hit(1, "tax law")]
    with ScriptedModel([_grade("relevant", 0.8, "on topic"), _grade("not_relevant", 0.7)]) as model:
        graded = await grade_results("What is ReAct?", hits, model.complete)
    assert [(g.hit.chunk.id, g.relevance, g.confidence) for g in graded] == [
        ("c0", "relevant", 0.8),
        ("c1", "not_relevant", 0.3),  # 70 % sure it is not relevant
    ]
    assert graded[0].reasoning == "on topic" and graded[0].graded
    first_call = model.calls[0]
    assert first_call.output_schema == schema_for(Grade)
    prompt = first_call.messages[-1].content
    assert "What is ReAct?" in prompt and "ReAct interleaves" in prompt and "doc.md" in prompt


async def test_a_failing_grade_is_retried_then_marked_ungraded() -> None:
    fake = FakeComplete(
        [ModelOutputError("bad json"), _grade("relevant"),
         ModelUnavailableError("timeout"), ModelUnavailableError("timeout")]
    )  # fmt: skip
    graded = await grade_results("q", [make_hit(0), make_hit(1)], fake)
    assert graded[0].relevant and graded[0].graded
    assert not graded[1].relevant and not graded[1].graded
    assert "could not be graded" in graded[1].reasoning and "timeout" in graded[1].reasoning


async def test_output_that_breaks_the_schema_counts_as_a_failure() -> None:
    fake = FakeComplete([{"relevance": "maybe", "confidence": 2, "reasoning": ""}, "not json"])
    [graded] = await grade_results("q", [make_hit(0)], fake)
    assert not graded.graded and graded.relevance == "not_relevant"


async def test_a_broken_script_is_not_swallowed() -> None:
    with pytest.raises(ScriptedModelError):
        await grade_results("q", [make_hit(0)], ScriptedModel([]).complete)


async def test_no_hits_no_calls() -> None:
    fake = FakeComplete([])
    assert await grade_results("q", [], fake) == []
    assert fake.calls == []


def test_lexical_grades_need_no_model_and_measure_passages_against_the_best_one() -> None:
    from kforge.rag.grading import grade_all_lexically

    question = (
        "Which 1945 comedy film starred the actress who later became a United States ambassador?"
    )
    hits = [
        make_hit(0, "Kiss and Tell is a 1945 comedy film starring Shirley Temple."),
        make_hit(1, "Shirley Temple, an actress, later served as an ambassador."),
        make_hit(2, "Bread needs flour, water, yeast and salt."),
    ]
    graded = grade_all_lexically(question, hits)
    # no passage holds half of the question's focus, yet the two that answer it are kept
    assert [g.relevant for g in graded] == [True, True, False]
    assert all((g.confidence >= 0.5) == g.relevant for g in graded)
    assert "holds 4 of the question's focus terms" in graded[0].reasoning
