"""Each agent's declared result type, read from runs stored by the previous version: citations
come back as ``Citation`` objects, and every interface renders their Sources the same way."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kforge import Runtime
from kforge.agents.results import (
    AgentResult,
    BuildResult,
    CitedAnswer,
    Report,
    read_result,
    sources_text,
)
from kforge.agents.tree.subagents import child_result
from kforge.errors import StateCorruptionError
from kforge.rag.types import Citation
from kforge.runtime.answers import answer_text
from kforge.store import RunRecord, RunStatus, SQLiteStore
from tests.cli.test_tree import kforge_cli

ANSWER = "A vision transformer splits an image into patches [1] and encodes them [2]."
OLD_ROUTER_RESULT: dict[str, Any] = {
    # a router run's result exactly as the previous version stored it
    "question": "What is a vision transformer?",
    "answer": ANSWER,
    "short_answer": "It splits an image into patches.",
    "refused": False,
    "citations": [
        {
            "number": 1,
            "chunk_id": "c-1",
            "file": "vit.md",
            "title": "Vision Transformers",
            "heading": "Vision Transformers > Patches",
            "page": None,
            "start": 0,
            "end": 120,
            "quote": "Vision transformers split an image into patches …",
        },
        # older still: no title, no quote, a page
        {"number": 2, "chunk_id": "c-2", "file": "vit.pdf", "page": 3, "start": 5, "end": 90},
    ],
    "out_of_scope": False,
    "fallback": False,
    "answer_path": "extractive",
    "answer_reason": "small model",
    "queries": ["What is a vision transformer?"],
    "route": ["retrieve", "answer"],
    "iterations": 2,
    "history_turns": 0,
}
SOURCES = (
    "Sources:\n"
    "  [1] vit.md § Vision Transformers > Patches, chars 0-120\n"
    "  [2] vit.pdf p. 3, chars 5-90"
)


def stored(store: SQLiteStore, run_id: str, agent: str, result: dict[str, Any]) -> RunRecord:
    now = datetime.now(UTC)
    run = RunRecord(run_id, agent, RunStatus.COMPLETED, now, now, {"args": {}}, result=result)
    store.create_run(run)
    return store.get_run(run_id)


def test_a_router_run_stored_by_the_previous_version_reads_as_a_cited_answer(
    tmp_path: Path,
) -> None:
    db = tmp_path / "k.db"
    store = SQLiteStore(db)
    run = stored(store, "old-router-run", "router", OLD_ROUTER_RESULT)
    rt = Runtime(store)
    result = rt.result(run.id)
    assert isinstance(result, CitedAnswer)
    assert result.text == ANSWER and result.path == "extractive"
    assert all(isinstance(c, Citation) for c in result.citations)
    assert [(c.number, c.title, c.page) for c in result.citations] == [
        (1, "Vision Transformers", None),
        (2, "", 3),
    ]
    assert result.stored["short_answer"] == "It splits an image into patches."
    # one rendering of Sources, whichever interface shows the answer
    assert sources_text(result.citations) == SOURCES
    assert answer_text(run) == f"{ANSWER}\n\n{SOURCES}"
    store.close()
    shown = kforge_cli(db, "runs", "show", "old-router")
    assert shown.returncode == 0, shown.stderr
    assert f"answer     {ANSWER}\n\n{SOURCES}\n" in shown.stdout


def test_each_agent_declares_where_its_text_is(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    report = stored(store, "r", "research", {"question": "q", "report": "# Report", "sources": []})
    build = stored(
        store, "b", "build", {"summary": "made it", "check_command": "pytest", "complete": True}
    )
    tree = stored(store, "t", "tree", {"answer": "Done.", "citations": []})
    assert isinstance(read_result(report), Report) and answer_text(report) == "# Report"
    built = read_result(build)
    assert isinstance(built, BuildResult) and (built.check_command, built.complete) == (
        "pytest",
        True,
    )
    assert answer_text(build) == "made it"
    assert isinstance(read_result(tree), CitedAnswer) and answer_text(tree) == "Done."
    # an agent that declares no type: its whole result, as JSON
    custom = stored(store, "c", "custom.agent", {"score": 3})
    assert type(read_result(custom)) is AgentResult and answer_text(custom) == '{"score": 3}'
    store.close()


def test_a_subagent_result_names_the_files_its_citations_come_from(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    result = {**OLD_ROUTER_RESULT, "main_answer": "patches"}
    child = child_result(stored(store, "child", "tree", result))
    assert child["answer"] == ANSWER and child["sources"] == ["vit.md", "vit.pdf"]
    assert child["main_answer"] == "patches"
    store.close()


def test_a_citation_the_store_cannot_read_is_named() -> None:
    with pytest.raises(StateCorruptionError, match="stored citation cannot be read"):
        CitedAnswer.load({"answer": "x", "citations": [{"number": 1}]})
    with pytest.raises(StateCorruptionError, match="must be a list"):
        CitedAnswer.load({"answer": "x", "citations": "vit.md"})
