"""The Research agent with a function model: every backward transition, both checkpoint
outcomes, fallback answers, and citations that name real chunks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kforge.agents.common.answer import MODEL_ONLY_SYSTEM
from kforge.agents.research import ResearchAgent
from kforge.agents.research.prompts import (
    INITIAL_PROMPTS,
    Breakdown,
    CategoryQuestions,
    Discovery,
    Expansion,
    Gaps,
)
from kforge.frames import PhaseChanged
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.rag.grading import Grade
from kforge.rag.ingest import ingest_folder
from kforge.rag.rewrite import Rewrite
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunRecord, RunStatus

DOCS = {
    "react.md": "# ReAct\n\nReAct interleaves reasoning traces and tool actions. The agent "
    "thinks, calls a tool, observes the result and repeats until it can answer.\n",
    "memory.md": "# Memory\n\nAgents keep episodic memory of reflections so that a failed "
    "action is not repeated. Context compaction keeps the grounding section.\n",
    "hitl.md": "# Human in the loop\n\nCheckpoints let a person approve, modify or reject a "
    "plan before the agent continues. The run waits without holding a worker.\n",
}


QUESTION = "How do agents keep memory and reason with checkpoints?"
"""A question the documents speak of, which the model's categories are about."""


@dataclass
class Script:
    """Decides each model reply from the schema the agent asked for."""

    tree: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"name": "Reasoning", "questions": ["How does ReAct interleave reasoning and tools?"]},
            {"name": "Memory", "questions": ["How do agents keep episodic memory?"]},
        ]
    )
    relevant: bool = True
    new_category_once: str = ""
    more_answers_once: str = ""
    missing_category_once: str = ""
    why: str = "the next step after ReAct"
    frontier: list[str] = field(default_factory=lambda: ["How do agents plan over long horizons?"])
    calls: list[str] = field(default_factory=list)

    def __call__(self, messages: list[Message], info: CallInfo) -> Any:
        schema = info.output_schema
        if schema is None:
            system = messages[0].content
            name = (
                "answer" if system in (INITIAL_PROMPTS["answer"], MODEL_ONLY_SYSTEM) else "insight"
            )
            if name == "insight":
                assert system == INITIAL_PROMPTS["rise_above"]
        else:
            name = next(k for k, v in SCHEMAS.items() if v == schema)
        self.calls.append(name)
        if name == "decompose":
            return {"categories": self.tree}
        if name == "new_category":
            return {"questions": ["How are agents evaluated?"]}
        if name == "grade":
            return {
                "relevance": "relevant" if self.relevant else "not_relevant",
                "confidence": 0.9,
                "reasoning": "mentions the topic",
            }
        if name == "rewrite":
            return {"query": "agent memory reflections " + str(len(self.calls))}
        if name == "answer":
            return "Agents observe the result of each action and decide again [1]."
        if name == "discover":
            new, self.new_category_once = self.new_category_once, ""
            return {"new_category": new}
        if name == "insight":
            return "Reasoning and acting alternate in loops that a person can steer."
        if name == "gaps":
            more, self.more_answers_once = self.more_answers_once, ""
            missing, self.missing_category_once = self.missing_category_once, ""
            return {
                "needs_more_answers": bool(more),
                "follow_up_question": more,
                "missing_category": missing,
            }
        return {"questions": [{"question": q, "why": self.why} for q in self.frontier]}


SCHEMAS = {
    "decompose": schema_for(Breakdown),
    "new_category": schema_for(CategoryQuestions),
    "grade": schema_for(Grade),
    "rewrite": schema_for(Rewrite),
    "discover": schema_for(Discovery),
    "gaps": schema_for(Gaps),
    "expand": schema_for(Expansion),
}


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def make_runtime(corpus_dir: Path, script: Script) -> Runtime:
    registry = AgentRegistry()
    registry.register("research", ResearchAgent)
    rt = Runtime(MemoryStore(), model=FunctionModel(script), registry=registry)
    ingest_folder(rt.services.corpus("docs"), corpus_dir)
    return rt


async def run_to_end(
    rt: Runtime, args: dict[str, Any], answer: Callable[[RunRecord], Any] = lambda _: "approve"
) -> RunRecord:
    run = await rt.run("research", {"corpus": "docs", "k": 2, **args})
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, answer(run))
        run = await rt.wait(run.id)
    return run


def backward_moves(rt: Runtime, run_id: str) -> list[tuple[str | None, str, str | None]]:
    return [
        (f.from_phase, f.to_phase, f.reason)
        for f in rt.frames(run_id)
        if isinstance(f, PhaseChanged) and f.is_backward
    ]


async def test_full_run_writes_a_cited_report(corpus_dir: Path) -> None:
    script = Script()
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": QUESTION})
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    report = result["report"]
    for heading in (
        "## Question tree",
        "## Answers",
        "## Insights by category",
        "## Frontier: adjacent questions",
        "## Sources",
    ):
        assert heading in report
    assert "How do agents plan over long horizons?" in report
    corpus = rt.services.corpus("docs")
    assert result["sources"], "answers cite sources"
    for source in result["sources"]:
        chunk = corpus.chunk(source["chunk_id"])
        assert chunk.file == source["file"] and (corpus_dir / chunk.file).exists()
        assert source["location"] == chunk.location
        assert f"`{source['file']}` — {source['location']}" in report
    phases = [f.to_phase for f in rt.frames(run.id) if isinstance(f, PhaseChanged)]
    assert phases == ["decompose", "answer", "rise_above", "expand", "complete"]
    types = {f.type for f in rt.frames(run.id)}
    assert {
        "data.question.added",
        "data.source.found",
        "data.answer.added",
        "data.insight.added",
        "data.adjacent.added",
    } <= types


async def test_modify_at_the_checkpoint_replaces_the_tree(corpus_dir: Path) -> None:
    script = Script()
    rt = make_runtime(corpus_dir, script)
    answers = iter(
        [
            {
                "action": "modify",
                "modifications": {
                    "categories": [
                        {
                            "name": "Oversight",
                            "questions": ["How do checkpoints keep people in control?"],
                        }
                    ]
                },
            },
            "approve",
        ]
    )
    seen: list[dict[str, Any]] = []

    def answer(run: RunRecord) -> Any:
        seen.append((run.pending_interaction or {}).get("payload", {}))
        return next(answers)

    run = await run_to_end(rt, {"question": QUESTION}, answer)
    assert run.status == RunStatus.COMPLETED
    assert [c["name"] for c in seen[1]["categories"]] == ["Oversight"]
    result = run.result or {}
    assert [q["text"] for q in result["questions"]] == [
        "How do checkpoints keep people in control?"
    ]
    assert script.calls.count("decompose") == 1  # modify does not ask the model again


async def test_reject_at_the_checkpoint_decomposes_again_with_the_reason(corpus_dir: Path) -> None:
    script = Script()
    rt = make_runtime(corpus_dir, script)
    answers = iter([{"action": "reject", "reason": "too broad"}, "approve"])
    run = await run_to_end(rt, {"question": QUESTION}, lambda _: next(answers))
    assert run.status == RunStatus.COMPLETED
    assert script.calls.count("decompose") == 2


async def test_answer_reveals_a_new_category(corpus_dir: Path) -> None:
    script = Script(new_category_once="Checkpoints")
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": QUESTION})
    assert run.status == RunStatus.COMPLETED
    assert backward_moves(rt, run.id) == [("answer", "decompose", "new_category_discovered")]
    names = [c["name"] for c in (run.result or {})["categories"]]
    assert "Checkpoints" in names
    assert "How are agents evaluated?" in (run.result or {})["report"]


@pytest.mark.parametrize(
    "proposed",
    [
        "Evaluation methods",  # neither the question nor the documents say it
        "memory_category",  # a slug of a category the tree has
        "agentsMemory",
        "MEMORY",
        "Reasoning, Memory",  # a join of categories
    ],
)
async def test_a_category_found_later_must_be_new_and_said_by_the_documents(
    corpus_dir: Path, proposed: str
) -> None:
    script = Script(new_category_once=proposed, missing_category_once=proposed)
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": QUESTION})
    assert run.status == RunStatus.COMPLETED
    assert backward_moves(rt, run.id) == []
    names = [c["name"] for c in (run.result or {})["categories"]]
    assert proposed not in names
    refused = [f for f in rt.frames(run.id) if f.type == "data.category.refused"]
    assert refused


async def test_synthesis_requires_more_answers(corpus_dir: Path) -> None:
    script = Script(more_answers_once="How does ReAct reason with tools?")
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": QUESTION})
    assert run.status == RunStatus.COMPLETED
    assert backward_moves(rt, run.id) == [
        ("rise_above", "answer", "synthesis_requires_more_answers")
    ]
    assert "How does ReAct reason with tools?" in [
        q["text"] for q in (run.result or {})["questions"]
    ]
    result = run.result or {}
    assert len(result["answers"]) == len(result["questions"]) == 4  # the question's own part too


async def test_synthesis_reveals_a_missing_category(corpus_dir: Path) -> None:
    script = Script(missing_category_once="Checkpoints")
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": QUESTION})
    assert run.status == RunStatus.COMPLETED
    assert backward_moves(rt, run.id) == [
        ("rise_above", "decompose", "synthesis_reveals_missing_category")
    ]
    assert "Checkpoints" in [c["name"] for c in (run.result or {})["categories"]]


async def test_no_relevant_source_falls_back_with_a_disclaimer_and_cites_nothing(
    corpus_dir: Path,
) -> None:
    # questions none of the documents holds the words of, so no passage can be graded in
    script = Script(
        relevant=False,
        tree=[
            {"name": "Cooking", "questions": ["How long should pasta boil?"]},
            {"name": "Baking", "questions": ["Which flour suits sourdough bread?"]},
        ],
    )
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": "How do cooks work?"})
    assert run.status == RunStatus.COMPLETED
    result = run.result or {}
    assert result["sources"] == []
    assert all(a["fallback"] and a["source_ids"] == [] for a in result["answers"].values())
    assert "rewrite" in script.calls
    assert "> " in result["report"]  # the disclaimer is shown


async def test_optional_checkpoint_after_answer(corpus_dir: Path) -> None:
    rt = make_runtime(corpus_dir, Script())
    prompts: list[str] = []

    def answer(run: RunRecord) -> Any:
        prompts.append((run.pending_interaction or {}).get("prompt", ""))
        return "approve"

    run = await run_to_end(rt, {"question": "How?", "review_answers": True}, answer)
    assert run.status == RunStatus.COMPLETED
    assert prompts == ["Approve the question tree?", "Review the sources and coverage?"]


async def test_empty_question_is_refused() -> None:
    from kforge.errors import ValidationError

    with pytest.raises(ValidationError, match="non-empty 'question'"):
        ResearchAgent({"question": "  "})


async def test_a_thin_breakdown_gets_sub_questions_from_the_passages_the_question_finds(
    corpus_dir: Path,
) -> None:
    script = Script(
        tree=[
            {"name": "Research Question", "questions": ["How do agents work?"]},
            {"name": "Other", "questions": ["1. How do agents work?", "Agents work."]},
        ]
    )
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": "How do agents keep memory and reflections?"})
    assert run.status == RunStatus.COMPLETED
    result = run.result or {}
    texts = [q["text"] for q in result["questions"]]
    # the question itself, then a plain question about the passage it finds best
    assert texts == ["How do agents keep memory and reflections?", "What is memory?"]
    names = [c["name"] for c in result["categories"]]
    assert names == ["Agents keep memory and reflections", "Memory"]
    # an echo of the instructions and a word that names nothing are no categories
    assert "Research Question" not in names and "Other" not in names


async def test_each_part_of_the_question_is_asked_under_a_name_from_its_words(
    corpus_dir: Path,
) -> None:
    script = Script(tree=[{"name": "Agent Memory", "questions": ["How is memory kept?"]}])
    rt = make_runtime(corpus_dir, script)
    question = "What is ReAct, how do agents keep memory, and how is a plan approved?"
    run = await run_to_end(rt, {"question": question, "answer": "extractive"})
    assert run.status == RunStatus.COMPLETED
    result = run.result or {}
    assert [q["text"] for q in result["questions"]][:3] == [
        "What is ReAct?",
        "How do agents keep memory?",
        "How is a plan approved?",
    ]
    names = [c["name"] for c in result["categories"]]
    assert names[:3] == ["ReAct", "Agents keep memory", "Approving a plan"]
    assert "Agent Memory" not in names  # the tree has it: "Agents keep memory"
    cited = {s["file"] for s in result["sources"]}
    assert {"react.md", "memory.md", "hitl.md"} <= cited  # each part answered from its page


async def test_no_sentence_is_written_twice_in_a_report(corpus_dir: Path) -> None:
    script = Script(
        tree=[
            {"name": "Reasoning", "questions": ["How does ReAct interleave reasoning and tools?"]},
            {"name": "Tools", "questions": ["How does the ReAct agent call a tool?"]},
        ]
    )
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": "How does ReAct work?", "answer": "extractive"})
    result = run.result or {}
    said = [g["text"] for a in result["answers"].values() for g in a["segments"]]
    assert said and len(said) == len(set(said))
    insights = " ".join(result["insights"].values())
    assert not any(sentence in insights for sentence in said)


async def test_an_empty_insight_says_why_in_its_frame_and_in_the_report(
    corpus_dir: Path,
) -> None:
    # every category is answered from react.md's two sentences: once the answers and the
    # first insight have said them, a category's insight has nothing left to quote
    script = Script(
        tree=[
            {"name": "Reasoning", "questions": ["How does ReAct interleave reasoning and tools?"]},
            {"name": "Tools", "questions": ["How does the ReAct agent call a tool?"]},
        ]
    )
    rt = make_runtime(corpus_dir, script)
    question = "How does ReAct interleave reasoning traces and tool actions?"
    run = await run_to_end(rt, {"question": question, "answer": "extractive"})
    result = run.result or {}
    added = [f.payload for f in rt.frames(run.id) if f.type == "data.insight.added"]
    empty = [p for p in added if not p["insight"]]
    assert empty, added
    report = result["report"].split("## Insights by category", 1)[1].split("## Frontier")[0]
    for category in result["categories"]:  # every category is listed, with its insight or why not
        assert f"- **{category['name']}**: " in report
    for payload in empty:  # and the reason given is true of the run
        category = next(c for c in result["categories"] if c["id"] == payload["category_id"])
        answers = [result["answers"].get(q) or {} for q in category["question_ids"]]
        cited = any(a.get("source_ids") for a in answers)
        why = (
            "every sentence it could quote from the passages its answers cite is already said above"
            if cited
            else "none of its answers cites a passage"
        )
        assert payload["empty_because"] == why
        assert f"- **{category['name']}**: _nothing further: {why}._" in report
    assert {p["empty_because"].split()[0] for p in empty} == {"every", "none"}  # both reasons


@pytest.mark.parametrize(
    ("answer", "why", "shown"),
    [
        ("generative", "the next step after ReAct", True),
        ("extractive", "the next step after ReAct", False),  # a small model's claim
        ("generative", "It is lightweight, lightweight, lightweight, lightweight.", False),
    ],
)
async def test_a_frontier_reason_is_the_model_s_claim_and_shown_only_when_it_can_be_trusted(
    corpus_dir: Path, answer: str, why: str, shown: bool
) -> None:
    rt = make_runtime(corpus_dir, Script(why=why))
    run = await run_to_end(rt, {"question": QUESTION, "answer": answer})
    report = (run.result or {})["report"]
    assert "- How do agents plan over long horizons?" in report
    assert (f"How do agents plan over long horizons? — {why}" in report) is shown


async def test_the_frontier_holds_no_statement_and_nothing_the_tree_asked(corpus_dir: Path) -> None:
    script = Script(
        frontier=[
            "ReAct is a loop that never ends",  # a statement: "?" added would not make it one
            "How does ReAct interleave reasoning and the tools?",  # the tree asked it
            "How do agents plan over long horizons?",
        ]
    )
    rt = make_runtime(corpus_dir, script)
    run = await run_to_end(rt, {"question": QUESTION})
    frontier = [f["question"] for f in (run.result or {})["frontier"]]
    assert "How do agents plan over long horizons?" in frontier
    assert not any(q.startswith(("ReAct is", "How does ReAct")) for q in frontier)
