"""The question tree is the user's question: its parts, and aspects from the passages that hold
its focus; a name the model proposes about something else, or a passage that shares only a
common word with the question, adds nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kforge import jsoncodec
from kforge.agents.research.planning import passage_parts
from kforge.agents.research.prompts import Breakdown
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.rag import sample_corpus_path
from kforge.rag.focus import question_focus
from kforge.rag.ingest import ingest_folder
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunRecord, RunStatus
from tests.agents.common.test_evidence import branch_docs

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


def _passages(question: str, hits: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A recorded plan: the whole question's hits as (file, title, heading), each graded by the
    question's focus, the terms weighed alike."""
    focus = question_focus(question)
    chunks = [
        {"chunk_id": f"c{n}", "file": file, "title": title, "heading": heading}
        for n, (file, title, heading) in enumerate(hits)
    ]
    for chunk in chunks:
        share = focus.share(f"{chunk['title']}\n{chunk['heading']}\n{question}")
        chunk |= {"share": share, "relevant": True}
    return {"whole": chunks, "parts": [[]], "focus": [jsoncodec.to_builtins(focus)]}


def test_a_manual_page_s_section_label_is_no_aspect() -> None:
    question = "How do branches work in git?"
    passages = _passages(
        question,
        [
            ("git-branch.txt", "git-branch(1)", "git-branch(1) > DESCRIPTION"),
            ("git-branch.txt", "git-branch(1)", "git-branch(1) > Renaming branches"),
        ],
    )
    parts = passage_parts(question, passages, ["Branches work in git"])
    assert [p.category for p in parts] == ["Renaming branches"]


async def test_each_part_is_answered_from_the_page_the_whole_question_turns_on(
    tmp_path: Path,
) -> None:
    rt = Runtime(MemoryStore(), model=FunctionModel(Proposer([])))
    ingest_folder(rt.services.corpus("git"), branch_docs(tmp_path))
    question = "How do I create, rename and delete a branch?"
    args = {"question": question, "corpus": "git", "answer": "extractive"}
    run = await rt.run("research", args)
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, "approve")
        run = await rt.wait(run.id)
    result = run.result or {}
    files = {s["id"]: s["file"] for s in result["sources"]}
    said = {}
    for q in result["questions"]:
        answer = result["answers"][q["id"]]
        assert files[answer["source_ids"][0]] == "git-branch.md", q["text"]
        said[q["text"]] = answer["text"]
    assert "-m, --move" in said["How do I rename a branch?"]
    assert "-d, --delete" in said["How do I delete a branch?"]
    assert "creates a new branch" in said["How do I create a branch?"]
