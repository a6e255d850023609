"""The one answer pipeline (what ``kforge ask`` runs): from passages graded relevant, cited;
without them, the model's own answer, disclaimed and citing nothing. What an answer cites and
how its Sources read come from the run's typed result."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kforge.agents.common.answer import FALLBACK_NOTE
from kforge.agents.results import CitedAnswer
from kforge.errors import ModelOutputError
from kforge.frames import DataEvent
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message
from kforge.rag.grading import Grade
from kforge.store.base import RunStatus
from tests.agents.helpers import runtime
from tests.agents.test_router import DOCS, IRRELEVANT, RELEVANT, corpus_store

QUESTION = "What is a vision transformer?"


async def answer(model: Any, question: str = QUESTION, **args: Any) -> CitedAnswer:
    rt = runtime(model, store=corpus_store())
    run = await rt.run("router", {"question": question, "corpus": "ml", **args})
    assert run.status == RunStatus.COMPLETED, run.error
    result = rt.result(run.id)
    assert isinstance(result, CitedAnswer)
    return result


def grading_vit(written: str, prompts: list[str]) -> FunctionModel:
    """Grades only the ViT passage relevant, then writes ``written`` (its prompts in
    ``prompts``)."""

    def reply(messages: list[Message], info: CallInfo) -> Any:
        if info.output_schema == schema_for(Grade):
            return RELEVANT if "(ViT)" in messages[-1].content else IRRELEVANT
        prompts.append(messages[-1].content)
        return written

    return FunctionModel(reply)


async def test_the_answer_cites_only_relevant_passages_and_drops_bad_markers() -> None:
    prompts: list[str] = []
    result = await answer(grading_vit("ViTs split images into patches [1][2][7].", prompts), k=3)
    assert result.answer == "ViTs split images into patches [1]."
    assert [(c.number, c.file) for c in result.citations] == [(1, "vit")]
    assert not result.fallback and not result.refused
    [prompt] = prompts
    assert "[1] (Vision Transformers)\nVision transformers (ViT) split an image" in prompt
    assert "YOLO" not in prompt  # a passage graded not relevant is never shown
    assert result.with_sources() == (f"{result.answer}\n\nSources:\n  {result.citations[0].label}")
    assert result.citations[0].label == "[1] vit chars 0-164"


async def test_an_answer_its_passages_do_not_support_is_replaced_by_their_sentences() -> None:
    invented = "ViTs control the amount of dopamine in the brain [1]."
    result = await answer(ScriptedModel([RELEVANT, invented, invented]), k=1)
    assert result.answer_path == "extractive_fallback"
    assert "dopamine" not in result.answer and "patches" in result.answer
    assert [c.file for c in result.citations] == ["vit"]


async def test_without_relevant_passages_the_model_answers_alone_with_a_disclaimer() -> None:
    prompts: list[str] = []

    def reply(messages: list[Message], info: CallInfo) -> Any:
        if info.output_schema == schema_for(Grade):
            return IRRELEVANT
        prompts.append(messages[-1].content)
        return "Probably an image model."

    # no guardrail: a question the documents have nothing on is searched, and nothing is found
    question = "Which transformer encoder design suits bread baking?"
    result = await answer(FunctionModel(reply), question, k=2, max_iterations=1, guardrail=False)
    assert result.fallback and result.citations == () and result.short_answer == ""
    assert result.answer == f"{FALLBACK_NOTE}\n\nProbably an image model."
    assert prompts and all("Passages:" not in p for p in prompts)
    assert result.with_sources() == result.answer  # no Sources: nothing is cited


async def test_passages_the_grader_could_not_check_are_never_cited() -> None:
    def reply(messages: list[Message], info: CallInfo) -> Any:
        if info.output_schema == schema_for(Grade):
            raise ModelOutputError("the grade is not JSON")
        return "A guess from general knowledge."

    result = await answer(FunctionModel(reply), k=2, max_iterations=1)
    assert result.citations == () and result.fallback
    assert result.answer.startswith(FALLBACK_NOTE)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    grades=st.lists(st.sampled_from([RELEVANT, IRRELEVANT, "error"]), min_size=4, max_size=4),
    markers=st.lists(st.integers(-1, 9), max_size=6),
)
def test_citations_are_only_passages_the_run_kept(grades: list[Any], markers: list[int]) -> None:
    """For any grades and any final reply, every cited source is a passage the run kept as
    relevant (``source.found``), and every listed source is cited in the text."""
    written = "Vision transformers split an image into patches " + " ".join(
        f"[{m}]" for m in markers
    )
    titles = [d.title for d in DOCS]

    def reply(messages: list[Message], info: CallInfo) -> Any:
        if info.output_schema == schema_for(Grade):
            prompt = messages[-1].content
            grade = next(g for t, g in zip(titles, grades, strict=True) if t in prompt)
            if grade == "error":
                raise ModelOutputError("the grade is not JSON")
            return grade
        if info.output_schema is not None:  # a routing decision: answer now
            return {"reasoning": "enough", "action": "generate", "query": ""}
        return written

    async def go() -> tuple[CitedAnswer, set[str]]:
        rt = runtime(FunctionModel(reply), store=corpus_store())
        run = await rt.run("router", {"question": QUESTION, "corpus": "ml", "k": 4})
        kept = {
            str(f.payload["chunk_id"])
            for f in rt.frames(run.id)
            if isinstance(f, DataEvent) and f.name == "source.found"
        }
        result = rt.result(run.id)
        assert isinstance(result, CitedAnswer)
        return result, kept

    result, kept = _run(go())
    assert {c.chunk_id for c in result.citations} <= kept
    for citation in result.citations:
        assert f"[{citation.number}]" in result.answer


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rounds=st.integers(1, 3), failures=st.lists(st.booleans(), min_size=12, max_size=12))
def test_searches_that_find_nothing_fall_back_with_a_disclaimer(
    rounds: int, failures: list[bool]
) -> None:
    """For any searches that find nothing relevant (passages graded not relevant, a grader
    that fails, or no passage at all), the answer is the model's own, says so, and cites
    nothing."""
    calls = iter(failures)

    def reply(messages: list[Message], info: CallInfo) -> Any:
        if info.output_schema == schema_for(Grade):
            if next(calls, False):
                raise ModelOutputError("the grade is not JSON")
            return IRRELEVANT
        if info.output_schema is not None:  # a routing decision: search again
            return {"reasoning": "try again", "action": "retrieve_chunks", "query": "sourdough"}
        return "A guess from general knowledge."

    question = "Which transformer encoder design suits bread baking?"
    result = _run(
        answer(FunctionModel(reply), question, k=2, max_iterations=rounds, guardrail=False)
    )
    assert result.fallback and result.citations == ()
    assert result.answer == f"{FALLBACK_NOTE}\n\nA guess from general knowledge."
