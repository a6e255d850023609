"""The Understand agent with a function model: phase progression, every backward trigger,
re-entry prompts, the blocking and informational checkpoints, state round trip and the data
events of each stage; and the small-model path (extractive explanations, lexical grading)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kforge.agents.understand import UnderstandAgent
from kforge.agents.understand.learner import assess_answers, grade_answer
from kforge.engine.runner import load_state
from kforge.errors import ValidationError
from kforge.frames import DataEvent, PhaseChanged, PhaseCheckpoint
from kforge.jsoncodec import dumps, loads
from kforge.llm.testing.function import FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.ingest import ingest_folder
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunRecord, RunStatus
from tests.agents.knowledge_scripts import UnderstandScript, write_docs

TOPIC = "human checkpoints"
GOOD = "a person approves, modifies or rejects the plan while the run waits"


def make_runtime(docs: Path, model: Any) -> Runtime:
    registry = AgentRegistry()
    registry.register("understand", UnderstandAgent)
    rt = Runtime(MemoryStore(), model=model, registry=registry)
    ingest_folder(rt.services.corpus("docs"), write_docs(docs))
    return rt


def answers_by_kind(check: str = GOOD) -> Callable[[RunRecord], Any]:
    def answer(run: RunRecord) -> Any:
        pending = run.pending_interaction or {}
        if pending.get("kind") == "checkpoint":
            return "approve"
        purpose = (pending.get("payload") or {}).get("purpose")
        if purpose == "background":
            return "I have built a chatbot"
        if purpose == "goal":
            return "design agents people can steer"
        if purpose in ("concept", "follow_up"):
            return "not sure"
        return check

    return answer


async def run_to_end(
    rt: Runtime,
    answer: Callable[[RunRecord], Any] | None = None,
    **args: Any,
) -> RunRecord:
    answer = answer or answers_by_kind()
    run = await rt.run("understand", {"topic": TOPIC, "corpus": "docs", "k": 2, **args})
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, answer(run))
        run = await rt.wait(run.id)
    return run


def moves(rt: Runtime, run_id: str) -> list[tuple[str | None, str, bool]]:
    return [
        (f.from_phase, f.to_phase, f.is_backward)
        for f in rt.frames(run_id)
        if isinstance(f, PhaseChanged)
    ]


def backward(rt: Runtime, run_id: str) -> list[tuple[str | None, str, str | None]]:
    return [
        (f.from_phase, f.to_phase, f.reason)
        for f in rt.frames(run_id)
        if isinstance(f, PhaseChanged) and f.is_backward
    ]


async def test_phases_progress_and_the_record_cites_the_documents(tmp_path: Path) -> None:
    script = UnderstandScript()
    rt = make_runtime(tmp_path, FunctionModel(script))
    run = await run_to_end(rt)
    assert run.status == RunStatus.COMPLETED, run.error
    assert moves(rt, run.id) == [
        (None, "calibrate", False),
        ("calibrate", "diagnose", False),
        ("diagnose", "teach", False),
        ("teach", "complete", False),
    ]
    result = run.result or {}
    report = result["report"]
    for heading in ("## What you knew", "## Objectives", "## What remains", "## Sources"):
        assert heading in report
    assert "Explain what a blocking checkpoint does" in report
    assert "**Check:** What can a person do at a blocking checkpoint?" in report
    assert f"**Your answer:** {GOOD}" in report
    assert "[1] `checkpoints.md`" in report
    objective = result["objectives"][0]
    assert objective["status"] == "passed"
    corpus = rt.services.corpus("docs")
    for source in result["sources"]:
        assert corpus.chunk(source["chunk_id"]).file == source["file"]
    knowledge = result["knowledge"]
    assert knowledge["unknown"] == ["Checkpoints"] and knowledge["goal"]


async def test_calibration_was_inaccurate_goes_back_and_asks_again(tmp_path: Path) -> None:
    script = UnderstandScript(inaccurate_once="the answers show approval workflows are known")
    rt = make_runtime(tmp_path, FunctionModel(script))
    prompts: list[str] = []

    def answer(run: RunRecord) -> Any:
        prompts.append((run.pending_interaction or {}).get("prompt", ""))
        return answers_by_kind()(run)

    run = await run_to_end(rt, answer)
    assert run.status == RunStatus.COMPLETED, run.error
    assert backward(rt, run.id) == [("diagnose", "calibrate", "calibration_was_inaccurate")]
    follow_up = [p for p in prompts if p.startswith("I may have misjudged")]
    assert len(follow_up) == 1 and "approval workflows are known" in follow_up[0]
    # only the follow-up is asked on re-entry: the first questions are not asked twice
    questions = [p for p in prompts if p != "Is this what you know about the topic?"]
    assert len(questions) == len(set(questions))
    assert script.calls.count("diagnose") == 2
    assert prompts.count("Is this what you know about the topic?") == 2


async def test_a_failed_check_goes_back_to_diagnose_for_a_remedial_objective(
    tmp_path: Path,
) -> None:
    script = UnderstandScript(fail_once=True)
    rt = make_runtime(tmp_path, FunctionModel(script))
    run = await run_to_end(rt)
    assert run.status == RunStatus.COMPLETED, run.error
    assert backward(rt, run.id) == [("teach", "diagnose", "check_question_failed")]
    objectives = (run.result or {})["objectives"]
    texts = [o["text"] for o in objectives]
    assert texts == [
        "Name the three answers a person can give at a checkpoint",
        "Explain what a blocking checkpoint does",
    ]
    assert objectives[0]["remedial_for"] == objectives[1]["id"]
    assert [o["status"] for o in objectives] == ["passed", "passed"]  # passed by the review
    assert objectives[1]["attempts"] == 1  # its check is not asked twice
    assert script.calls.count("grade") == 2
    # the re-entry prompt of DIAGNOSE and TEACH differs from the first one
    first, again = script.systems["diagnose"][0], script.systems["remedial"][0]
    assert "<task>" in first and "You are returning to the DIAGNOSE phase" not in first
    assert "You are returning to the DIAGNOSE phase" in again
    assert "check_question_failed" in again and "<task>" not in again
    teach = script.systems["explain"]
    assert "returning to the TEACH phase" not in teach[0]
    assert "returning to the TEACH phase" in teach[-1]


async def test_a_missing_prerequisite_goes_back_to_calibrate(tmp_path: Path) -> None:
    script = UnderstandScript(missing_once="Agent runs")
    rt = make_runtime(tmp_path, FunctionModel(script))
    prompts: list[str] = []

    def answer(run: RunRecord) -> Any:
        prompts.append((run.pending_interaction or {}).get("prompt", ""))
        return answers_by_kind()(run)

    run = await run_to_end(rt, answer)
    assert run.status == RunStatus.COMPLETED, run.error
    assert backward(rt, run.id) == [("teach", "calibrate", "fundamental_prerequisite_gap")]
    assert any(p.startswith("Before we go on: what do you know about agent runs?") for p in prompts)
    result = run.result or {}
    assert [o["concept"] for o in result["objectives"]] == ["Agent runs", "Checkpoints"]
    assert result["objectives"][1]["prerequisites"] == ["Agent runs"]
    assert "Agent runs" in result["knowledge"]["unknown"]
    phases = [t for _, t, _ in moves(rt, run.id)]
    assert phases == [
        "calibrate",
        "diagnose",
        "teach",
        "calibrate",
        "diagnose",
        "teach",
        "complete",
    ]


async def test_the_knowledge_checkpoint_blocks_and_takes_modify_and_reject(
    tmp_path: Path,
) -> None:
    script = UnderstandScript()
    rt = make_runtime(tmp_path, FunctionModel(script))
    run = await rt.run("understand", {"topic": TOPIC, "corpus": "docs"})
    seen: list[dict[str, Any]] = []
    replies = iter(
        [
            {"action": "modify", "modifications": {"known": ["Approval workflows"]}},
            {"action": "reject", "reason": "I have never heard of checkpoints"},
            "approve",
        ]
    )
    while run.status == RunStatus.AWAITING_USER:
        pending = run.pending_interaction or {}
        if pending.get("kind") == "checkpoint":
            assert rt.get_run(run.id).status == RunStatus.AWAITING_USER  # it waits
            seen.append(dict(pending.get("payload") or {}))
            reply = next(replies)
        else:
            reply = answers_by_kind()(run)
        await rt.resume(run.id, reply)
        run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    assert len(seen) == 3
    assert seen[0]["knowledge"]["partial"] == ["Approval workflows"]
    assert seen[1]["knowledge"]["known"] == ["Approval workflows"]
    assert "known" in seen[0]["modify_keys"]
    notes = [q for q in (run.result or {})["questions"] if q["purpose"] == "follow_up"]
    assert [q["answer"] for q in notes] == ["I have never heard of checkpoints"]
    with pytest.raises(ValidationError, match="unknown key"):
        run2 = await rt.run("understand", {"topic": TOPIC, "corpus": "docs"})
        while (run2.pending_interaction or {}).get("kind") != "checkpoint":
            await rt.resume(run2.id, answers_by_kind()(run2))
            run2 = await rt.wait(run2.id)
        await rt.resume(run2.id, {"action": "modify", "modifications": {"nonsense": 1}})
    # after each objective an informational checkpoint shows its summary without waiting
    infos = [f for f in rt.frames(run.id) if isinstance(f, PhaseCheckpoint) and f.phase == "teach"]
    assert infos and all(not f.requires_approval for f in infos)
    assert infos[0].payload["objective"] == "Explain what a blocking checkpoint does"


async def test_state_round_trips_in_the_middle_of_teach(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, FunctionModel(UnderstandScript()))
    run = await rt.run("understand", {"topic": TOPIC, "corpus": "docs"})
    while (run.pending_interaction or {}).get("payload", {}).get("purpose") != "check":
        if "explanation" in (run.pending_interaction or {}).get("payload", {}):
            break
        await rt.resume(run.id, answers_by_kind()(run))
        run = await rt.wait(run.id)
    state = load_state(rt.store, run.id)[0]["agent"]
    assert state["current_phase"] == "teach"
    restored = UnderstandAgent({"topic": "x"})
    restored.restore_state(loads(dumps(state)))
    assert restored.get_state() == state
    assert restored.rc.objectives[0]["status"] == "explained"
    assert restored.rc.phase_visits == {"calibrate": 1, "diagnose": 1, "teach": 1}
    assert restored.topic == TOPIC  # the run's own arguments come back with its state


async def test_events_at_each_stage(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, FunctionModel(UnderstandScript()))
    run = await run_to_end(rt)
    frames = rt.frames(run.id)
    names = [f.name for f in frames if isinstance(f, DataEvent)]
    stages = [
        "calibration.question",
        "calibration.answered",
        "knowledge.assessed",
        "objective.added",
        "source.found",
        "objective.explained",
        "check.graded",
    ]
    positions = [names.index(n) for n in stages]
    assert positions == sorted(positions)
    types = [f.type for f in frames]
    assert types.index("phase.checkpoint") < types.index("data.objective.added")
    assert types[-2] == "complete"


async def test_the_small_model_path_reads_the_documents_and_grades_by_their_words(
    tmp_path: Path,
) -> None:
    # a model that writes extractive answers is never asked to judge: a scripted model with no
    # replies fails loudly if it is called
    model = ScriptedModel([])
    model.answer_style = "extractive"  # type: ignore[attr-defined]
    rt = make_runtime(tmp_path, model)
    run = await run_to_end(rt, answers_by_kind(check="not sure"))
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    concepts = [o["concept"] for o in result["objectives"]]
    assert "Checkpoints" in concepts  # from the titles of the documents the topic finds
    assert "_Checkpoints — from `checkpoints.md`" in result["report"]
    first = result["objectives"][0]
    assert first["explanation"] and all(s["source_id"] for s in first["explanation"])
    assert first["check_question"].startswith("In your own words: what")
    assert backward(rt, run.id)[0][2] == "check_question_failed"
    assert "not yet understood" in result["report"]


def test_reading_answers_without_a_model() -> None:
    questions = [
        {"purpose": "background", "answer": "nothing, I'm new to this"},
        {"purpose": "goal", "answer": "steer my agents"},
        {"purpose": "concept", "concept": "Checkpoints", "answer": "they pause a run for a person"},
        {"purpose": "concept", "concept": "Approval", "answer": "no idea"},
    ]
    state = assess_answers(["Checkpoints", "Approval", "Resume"], questions, {})
    assert state["partial"] == ["Checkpoints"]
    assert state["unknown"] == ["Approval", "Resume"]
    assert state["goal"] == "steer my agents"
    explanation = "A blocking checkpoint pauses the run until a person approves the plan."
    ok, feedback = grade_answer("the run pauses until someone approves", explanation, "What?")
    assert ok and "pauses" in feedback
    ok, feedback = grade_answer("I don't know", explanation, "What is a checkpoint?")
    assert not ok and feedback.endswith(f'read again: "{explanation}"')
    assert not grade_answer("a checkpoint", explanation, "What is a checkpoint?")[0]


def _extractive_model() -> ScriptedModel:
    # a model that writes extractive answers is never asked to judge: a scripted model with no
    # replies fails loudly if it is called
    model = ScriptedModel([])
    model.answer_style = "extractive"  # type: ignore[attr-defined]
    return model


@pytest.mark.parametrize(
    ("check", "understood"),
    [
        ("the run stops until someone approves or rejects the plan", True),  # a paraphrase
        ("a person must approve, change or reject the plan before the run goes on", True),
        ("it saves the database to disk every hour", False),
        ("a checkpoint", False),  # the question's own words say nothing
    ],
)
async def test_a_check_answer_is_graded_by_the_key_fact_it_states(
    tmp_path: Path, check: str, understood: bool
) -> None:
    rt = make_runtime(tmp_path, _extractive_model())
    run = await run_to_end(rt, answers_by_kind(check=check), max_objectives=1)
    assert run.status == RunStatus.COMPLETED, run.error
    objective = (run.result or {})["objectives"][-1]
    assert objective["concept"] == "Checkpoints"
    assert (objective["status"] == "passed") is understood
    if understood:
        assert objective["feedback"].startswith('Right: the documents say "A blocking checkpoint')
    else:
        assert 'read again: "' in objective["feedback"]


async def test_objectives_come_from_the_passages_and_are_explained_from_their_own_pages(
    tmp_path: Path,
) -> None:
    rt = make_runtime(tmp_path, _extractive_model())
    run = await run_to_end(rt, answers_by_kind(check="not sure"), topic="approval workflows")
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    first = result["objectives"][0]
    assert first["concept"] == "Approval workflows" and first["files"] == ["approval.md"]
    by_id = {s["id"]: s for s in result["sources"]}
    for objective in result["objectives"]:
        for segment in objective["explanation"]:
            assert by_id[segment["source_id"]]["file"] in objective["files"]


async def test_titles_with_a_subtitle_give_objectives(tmp_path: Path) -> None:
    docs = tmp_path / "manual"
    docs.mkdir()
    (docs / "closures.md").write_text(
        "# The Closure API (libffi: the portable foreign function interface library)\n\n"
        "A closure lets a foreign caller call a function you write. The closure API "
        "allocates a writable closure, prepares it with a handler, and returns the code "
        "address to hand to the caller.\n"
    )
    (docs / "types.md").write_text(
        "# GNU libffi manual: 2.3 Type Example\n\nA structure type lists its element types "
        "and ends the list with a null pointer.\n"
    )
    registry = AgentRegistry()
    registry.register("understand", UnderstandAgent)
    rt = Runtime(MemoryStore(), model=_extractive_model(), registry=registry)
    ingest_folder(rt.services.corpus("manual"), docs)
    run = await rt.run("understand", {"topic": "the closure API", "corpus": "manual", "k": 2})
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, answers_by_kind(check="not sure")(run))
        run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    objectives = (run.result or {})["objectives"]
    assert [o["concept"] for o in objectives if not o["remedial_for"]] == ["The Closure API"]
    assert objectives[-1]["text"] == "What is the closure API?"


async def test_nothing_to_teach_fails_the_run_and_says_so(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, _extractive_model())
    run = await run_to_end(rt, answers_by_kind(), topic="quantum chromodynamics")
    assert run.status == RunStatus.FAILED
    assert "I found nothing to teach about quantum chromodynamics in these documents" in (
        run.error or ""
    )
    assert run.result is None  # no learning record that says otherwise


@pytest.mark.parametrize(
    ("explanation", "question", "right", "wrong"),
    [
        # Node.js 18.20.4 API docs (nodejs-doc, MIT licence): fs.md, worker_threads.md,
        # timers.md; GNU gettext 0.21 manual (gettext-doc, GFDL 1.2): 7.1, 10.1
        (
            "The number of hard-links that exist for the file.",
            "In your own words: what is stats.nlink?",
            "how many hard links point to the file",
            "the size of the file in bytes",
        ),
        (
            "Stop all JavaScript execution in the worker thread as soon as possible. Returns a "
            "Promise for the exit code that is fulfilled when the 'exit' event is emitted.",
            "In your own words: what does worker.terminate() do?",
            "it kills the worker as fast as possible and gives back a promise of the exit code",
            "it starts a new worker thread",
        ),
        (
            "The msgmerge program merges two Uniforum style .po files together.",
            "In your own words: what does the msgmerge program do?",
            "it combines two .po files into one",
            "it compiles a PO file into a binary MO file",
        ),
        (
            "The timer functions within Node.js implement a similar API as the timers API "
            "provided by Web Browsers but use a different internal implementation that is built "
            "around the Node.js Event Loop. The `timer` module exposes a global API for "
            "scheduling functions to be called at some future period of time.",
            "In your own words: what are timers?",
            "they schedule functions to be called later, at some future time",
            "they measure how long a function took to run",
        ),
    ],
)
def test_a_paraphrase_passes_and_an_answer_about_something_else_does_not(
    explanation: str, question: str, right: str, wrong: str
) -> None:
    assert grade_answer(right, explanation, question)[0]
    ok, feedback = grade_answer(wrong, explanation, question)
    assert not ok and "read again" in feedback


def test_a_topic_is_required() -> None:
    with pytest.raises(ValidationError, match="non-empty 'topic'"):
        UnderstandAgent({"topic": "  "})
    with pytest.raises(ValidationError, match="'max_objectives' must be a positive integer"):
        UnderstandAgent({"topic": "t", "max_objectives": 0})
