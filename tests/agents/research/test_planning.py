"""The question tree is the user's question: its parts, and aspects from the passages that hold
its focus; a name the model proposes about something else, or a passage that shares only a
common word with the question, adds nothing."""

from __future__ import annotations

from typing import Any

from kforge.agents.research.prompts import Breakdown
from kforge.llm.function import CallInfo, FunctionModel
from kforge.llm.structured import schema_for
from kforge.llm.types import Message
from kforge.rag import sample_corpus_path
from kforge.rag.ingest import ingest_folder
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunRecord, RunStatus

MAIN_JOB = "How do agents keep a human in the loop?"
"""The README's first command asks this of the sample documents."""


class Proposer:
    """Proposes the categories a small model was seen to propose for the main job (a title of
    the documents that shares the word "agents" with the question), and nothing else."""

    def __init__(self, categories: list[dict[str, Any]]) -> None:
        self.categories = categories

    def __call__(self, messages: list[Message], info: CallInfo) -> Any:
        if info.output_schema == schema_for(Breakdown):
            return {"categories": self.categories}
        if info.output_schema is None:
            return "No passage says more."
        props = info.output_schema.get("properties", {})
        return {key: [] if v.get("type") == "array" else "" for key, v in props.items()} | (
            {"needs_more_answers": False} if "needs_more_answers" in props else {}
        )


async def research(question: str, categories: list[dict[str, Any]]) -> tuple[RunRecord, Runtime]:
    rt = Runtime(MemoryStore(), model=FunctionModel(Proposer(categories)))
    ingest_folder(rt.services.corpus("samples"), sample_corpus_path())
    args = {"question": question, "corpus": "samples", "answer": "extractive"}
    run = await rt.run("research", args)
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, "approve")
        run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    return run, rt


async def test_the_main_job_asks_about_a_human_in_the_loop_not_about_agent_architectures() -> None:
    drifted = [{"name": "Agent Architectures", "questions": ["What are agent architectures?"]}]
    run, rt = await research(MAIN_JOB, drifted)
    result = run.result or {}
    assert [q["text"] for q in result["questions"]] == [
        MAIN_JOB,
        # aspects: sections of the document that holds the question's focus best
        "What are kinds of interaction in human-in-the-loop design?",
        "What is human-in-the-loop design?",
    ]
    refused = [f.payload for f in rt.frames(run.id) if f.type == "data.category.refused"]
    assert {"name": "Agent Architectures", "why": "the question is not about it"} in refused
    cited = [s["file"] for s in result["sources"]]
    assert cited and cited[0] == "human-in-the-loop-design.md"
    report = result["report"]
    assert "agent architectures" not in report.split("## Answers")[0].lower()


async def test_a_proposed_category_about_the_question_joins_the_tree() -> None:
    asked = [{"name": "Approval", "questions": ["How does a person approve a plan in the loop?"]}]
    run, _ = await research(MAIN_JOB, asked)
    result = run.result or {}
    assert "Approval" in [c["name"] for c in result["categories"]]
    assert "How does a person approve a plan in the loop?" in [
        q["text"] for q in result["questions"]
    ]


async def test_each_part_of_a_three_part_question_has_its_own_section() -> None:
    question = (
        "What is context compaction, how does reciprocal rank fusion combine rankings, and "
        "what is BM25?"
    )
    run, _ = await research(question, [])
    result = run.result or {}
    report = result["report"]
    sections = {
        "Context compaction": "context-compaction.md",
        "Reciprocal rank fusion combine rankings": "hybrid-search-and-rrf.md",
        "BM25": "bm25-lexical-search.md",
    }
    by_name = {c["name"]: c for c in result["categories"]}
    sources = {s["id"]: s["file"] for s in result["sources"]}
    for name, document in sections.items():
        assert f"### {name}" in report
        (qid,) = by_name[name]["question_ids"][:1]
        answer = result["answers"][qid]
        assert not answer["fallback"], name
        assert sources[answer["source_ids"][0]] == document, name  # the best passage first
