"""Each agent's declared result type, read from runs stored by the previous version: citations
come back as ``Citation`` objects, and every interface renders their Sources the same way."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge import Runtime, jsoncodec
from kforge.agents.results import (
    BuildResult,
    CitedAnswer,
    ResearchReport,
    TreeResult,
    UntypedResult,
    read_result,
    sources_text,
)
from kforge.agents.tree.subagents import child_result
from kforge.errors import StateCorruptionError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.types import Citation
from kforge.runtime.answers import answer_text
from kforge.store import RunRecord, RunStatus, SQLiteStore
from kforge.store.memory import MemoryStore
from tests.agents.helpers import runtime
from tests.agents.test_router import RELEVANT, corpus_store
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
    assert result.short_answer == "It splits an image into patches."
    assert result.queries == ("What is a vision transformer?",) and result.iterations == 2
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
    assert isinstance(read_result(report), ResearchReport) and answer_text(report) == "# Report"
    built = read_result(build)
    assert isinstance(built, BuildResult) and (built.check_command, built.complete) == (
        "pytest",
        True,
    )
    assert answer_text(build) == "made it"
    assert isinstance(read_result(tree), TreeResult) and answer_text(tree) == "Done."
    # an agent that declares no type: its whole result, as JSON
    custom = stored(store, "c", "custom.agent", {"score": 3})
    untyped = read_result(custom)
    assert isinstance(untyped, UntypedResult) and untyped.value == {"score": 3}
    assert answer_text(custom) == '{"score": 3}'
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


_text = st.text(max_size=30)
_citation = st.builds(
    Citation,
    number=st.integers(1, 50),
    chunk_id=_text,
    file=_text,
    title=_text,
    heading=_text,
    page=st.none() | st.integers(1, 900),
    start=st.integers(0, 10_000),
    end=st.integers(0, 10_000),
    quote=_text,
)
_answer = st.builds(
    CitedAnswer,
    question=_text,
    answer=_text,
    short_answer=_text,
    refused=st.booleans(),
    citations=st.lists(_citation, max_size=4).map(tuple),
    answer_path=st.sampled_from(["extractive", "generative", "extractive_fallback"]),
    queries=st.lists(_text, max_size=3).map(tuple),
    iterations=st.integers(0, 9),
)


@settings(max_examples=60, deadline=None)
@given(answer=_answer)
def test_any_stored_answer_reads_back_as_the_same_typed_value(answer: CitedAnswer) -> None:
    """For any result an agent builds, the run's record keeps it as JSON and reading the run
    gives back the same value, its citations ``Citation`` objects."""
    store = MemoryStore()
    now = datetime.now(UTC)
    stored_json = jsoncodec.loads(jsoncodec.dumps(answer.stored()))
    store.create_run(
        RunRecord("r", "router", RunStatus.COMPLETED, now, now, {"args": {}}, result=stored_json)
    )
    assert read_result(store.get_run("r")) == answer


async def test_a_router_run_reads_back_as_the_answer_the_agent_built() -> None:
    store = corpus_store()
    rt = runtime(ScriptedModel([RELEVANT, "ViTs split images into patches [1]."]), store=store)
    run = await rt.run(
        "router", {"question": "What is a vision transformer?", "corpus": "ml", "k": 1}
    )
    result = rt.result(run.id)
    assert isinstance(result, CitedAnswer)
    assert result.answer == "ViTs split images into patches [1]."
    assert result.queries == ("What is a vision transformer?",)
    assert [type(c) for c in result.citations] == [Citation]
    assert result.citations[0].file == "vit" and result.citations[0].title == "Vision Transformers"
    # the stored form is the one the previous version wrote: same keys, citations as objects
    assert run.result == result.stored()
    assert list(run.result or {}) == list(OLD_ROUTER_RESULT)
    assert set((run.result or {})["citations"][0]) == set(OLD_ROUTER_RESULT["citations"][0])


def test_a_result_that_does_not_fit_its_type_is_named() -> None:
    with pytest.raises(StateCorruptionError, match="does not read as CitedAnswer"):
        CitedAnswer.load({"answer": ["not", "text"]})


def test_each_built_in_agent_returns_the_result_type_it_declares() -> None:
    """The type an agent's result is built as (its ``result`` or ``partial_result``, what its
    last ``StepOutcome`` carries) is the ``result_type`` readers read it back as."""
    import typing

    from kforge.agents.builtin import BUILTIN_AGENTS, default_registry

    assert len(BUILTIN_AGENTS) >= 6
    for agent_type in BUILTIN_AGENTS:
        factory = default_registry.factory(agent_type)
        declared = factory.result_type  # type: ignore[attr-defined]
        built = getattr(factory, "result", None) or factory.partial_result  # type: ignore[attr-defined]
        assert typing.get_type_hints(built)["return"] is declared, agent_type
