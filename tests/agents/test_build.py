"""The Build agent with a function model standing in for a capable one: phase progression, the
backward trigger (a gap the model names, a module the sandbox lacks), a failing check reflected
on and retried, the fallback to the known-good shape, the plan checkpoint, state round trip and
events; the small-model path; and the artifact passing its own check from a clean shell."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kforge.agents.build import BuildAgent
from kforge.agents.build.artifact import readme_text
from kforge.agents.build.from_goal import goal_shape, program_problem
from kforge.agents.build.prompts import GoalProgram
from kforge.agents.build.shapes import choose_shape, load_shape, shape_names
from kforge.agents.build.workspace import Workspace
from kforge.engine.runner import load_state
from kforge.errors import ValidationError
from kforge.frames import DataEvent, PhaseChanged, PhaseCheckpoint, Reflection, ToolCallFrame
from kforge.jsoncodec import dumps, loads
from kforge.llm.testing.function import FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.ingest import ingest_folder
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunRecord, RunStatus
from tests.agents.knowledge_scripts import BuildScript, check_in_clean_shell, write_docs

GOAL = "a CSV summary tool"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    return write_docs(folder)


def make_runtime(docs: Path, model: Any) -> Runtime:
    registry = AgentRegistry()
    registry.register("build", BuildAgent)
    rt = Runtime(MemoryStore(), model=model, registry=registry)
    ingest_folder(rt.services.corpus("docs"), docs)
    return rt


async def run_to_end(rt: Runtime, out: Path, answer: Any = "approve", **args: Any) -> RunRecord:
    run = await rt.run("build", {"goal": GOAL, "workspace": str(out), "corpus": "docs", **args})
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, answer(run) if callable(answer) else answer)
        run = await rt.wait(run.id)
    return run


def backward(rt: Runtime, run_id: str) -> list[tuple[str | None, str, str | None]]:
    return [
        (f.from_phase, f.to_phase, f.reason)
        for f in rt.frames(run_id)
        if isinstance(f, PhaseChanged) and f.is_backward
    ]


async def test_the_model_writes_the_code_and_the_artifact_passes_its_own_check(
    docs: Path, tmp_path: Path
) -> None:
    script = BuildScript()
    out = tmp_path / "out"
    out.mkdir()
    rt = make_runtime(docs, FunctionModel(script))
    run = await run_to_end(rt, out)
    assert run.status == RunStatus.COMPLETED, run.error
    phases = [f.to_phase for f in rt.frames(run.id) if isinstance(f, PhaseChanged)]
    assert phases == ["grounding", "making", "complete"]
    result = run.result or {}
    assert result["complete"] and [s["status"] for s in result["plan"]] == ["done"] * 3
    assert result["files"]["csv_summary.py"]["origin"] == "model"
    assert result["files"]["check_csv_summary.py"]["origin"] == "template"
    assert sorted(p.name for p in out.iterdir()) == [
        "BUILD_LOG.md",
        "README.md",
        "check_csv_summary.py",
        "csv_summary.py",
        "sample.csv",
    ]
    log = (out / "BUILD_LOG.md").read_text()
    assert "## Plan and checks" in log and "check 1 (model files): passed" in log
    assert "Print one line per column." in log  # the model's constraint
    readme = (out / "README.md").read_text()
    assert "A command-line tool that prints a summary of each column" in readme
    checked = check_in_clean_shell(out, result["check_command"])
    assert checked.returncode == 0, checked.stderr
    assert "all checks passed" in checked.stdout
    ran = subprocess.run(
        [sys.executable, "csv_summary.py", "sample.csv"],
        cwd=out,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "population: 5 filled, 0 empty, min 232000, max 3305000" in ran.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "out"]  # nothing else


async def test_a_failing_check_is_reflected_on_and_retried(docs: Path, tmp_path: Path) -> None:
    script = BuildScript(broken_once=True)
    rt = make_runtime(docs, FunctionModel(script))
    run = await run_to_end(rt, tmp_path / "out")
    assert run.status == RunStatus.COMPLETED, run.error
    core = next(s for s in (run.result or {})["plan"] if s["id"] == "core")
    assert [(c["attempt"], c["ok"], c["origin"]) for c in core["checks"]] == [
        (1, False, "model"),
        (2, True, "model"),
    ]
    reflections = [f for f in rt.frames(run.id) if isinstance(f, Reflection)]
    assert len(reflections) == 1
    assert reflections[0].suggested_fix == "rewrite the files with the error in view"
    retry = [c for c in script.calls if c == "code"]
    assert len(retry) == 2
    assert not backward(rt, run.id)


async def test_checks_that_keep_failing_fall_back_to_the_known_good_shape(
    docs: Path, tmp_path: Path
) -> None:
    def broken(messages: list[Any], info: Any) -> Any:
        reply = BuildScript()(messages, info)
        if isinstance(reply, dict) and "files" in reply:
            return {
                "files": [{"path": "csv_summary.py", "content": "x = (\n"}],
                "conceptual_gap": "",
            }
        return reply

    rt = make_runtime(docs, FunctionModel(broken))
    run = await run_to_end(rt, tmp_path / "out", max_retries=1)
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    core = next(s for s in result["plan"] if s["id"] == "core")
    assert [(c["ok"], c["origin"]) for c in core["checks"]] == [
        (False, "model"),
        (False, "model"),
        (True, "fallback"),
    ]
    assert result["complete"]
    assert (tmp_path / "out" / "csv_summary.py").read_text() == load_shape("csv_summary").template(
        "csv_summary.py"
    )
    fixes = [f.suggested_fix for f in rt.frames(run.id) if isinstance(f, Reflection)]
    assert fixes[-1] == "fall back to the known-good shape of this step"


@pytest.mark.parametrize("trigger", ["named", "missing_module"])
async def test_a_conceptual_gap_goes_back_to_grounding(
    docs: Path, tmp_path: Path, trigger: str
) -> None:
    script = (
        BuildScript(gap_once="how quoted cells with commas are read")
        if trigger == "named"
        else BuildScript(missing_module_once=True)
    )
    rt = make_runtime(docs, FunctionModel(script))
    prompts: list[str] = []

    def answer(run: RunRecord) -> Any:
        prompts.append((run.pending_interaction or {}).get("prompt", ""))
        return "approve"

    run = await run_to_end(rt, tmp_path / "out", answer)
    assert run.status == RunStatus.COMPLETED, run.error
    assert backward(rt, run.id) == [("making", "grounding", "conceptual_gap_discovered")]
    result = run.result or {}
    assert "CSV dialects" in [c["name"] for c in result["concepts"]]
    assert "Read the file with csv.DictReader." in result["constraints"]
    if trigger == "missing_module":
        assert any("Do not import 'pandas'" in c for c in result["constraints"])
    assert prompts == ["Proceed with this plan?", "Proceed with this plan?"]  # approved again
    assert result["complete"]
    # re-entry prompts differ from the first ones, and say why the run is back
    grounding, gap = script.systems["grounding"][0], script.systems["gap"][0]
    assert "<task>" in grounding and "returning to the GROUNDING phase" not in grounding
    assert "returning to the GROUNDING phase" in gap and "conceptual_gap_discovered" in gap
    making = script.systems["code"]
    assert "returning to the MAKING phase" not in making[0]
    assert "returning to the MAKING phase" in making[-1]


async def test_the_plan_checkpoint_blocks_and_takes_modify_and_reject(
    docs: Path, tmp_path: Path
) -> None:
    rt = make_runtime(docs, FunctionModel(BuildScript()))
    out = tmp_path / "out"
    out.mkdir()
    replies = iter(
        [
            {"action": "modify", "modifications": {"constraints": ["Keep it under 100 lines."]}},
            {"action": "reject", "reason": "I want to count the words of a text"},
            "approve",
        ]
    )
    seen: list[dict[str, Any]] = []

    def answer(run: RunRecord) -> Any:
        assert run.status == RunStatus.AWAITING_USER
        assert not any(out.iterdir())  # nothing is made before the plan is approved
        seen.append(dict((run.pending_interaction or {}).get("payload") or {}))
        return next(replies)

    run = await run_to_end(rt, out, answer)
    assert run.status == RunStatus.COMPLETED, run.error
    assert seen[0]["program"] == "CSV summary tool"
    assert "Keep it under 100 lines." in seen[1]["constraints"]
    assert seen[2]["program"] == "Word frequency counter"  # the reason chose another shape
    assert set(seen[0]["modify_keys"]) == {"shape", "constraints", "summary"}
    assert (out / "word_frequency.py").exists()


async def test_state_round_trips_in_the_middle_of_making(docs: Path, tmp_path: Path) -> None:
    rt = make_runtime(docs, FunctionModel(BuildScript()))
    run = await rt.run("build", {"goal": GOAL, "workspace": str(tmp_path / "w"), "corpus": "docs"})
    await rt.resume(run.id, "approve")
    run = await rt.wait(run.id)
    state = load_state(rt.store, run.id)[0]["agent"]
    assert state["current_phase"] == "complete"
    restored = BuildAgent({"goal": "other", "workspace": "elsewhere"})
    restored.restore_state(loads(dumps(state)))
    assert restored.get_state() == state
    assert restored.goal == GOAL and restored.workspace.root == (tmp_path / "w").resolve()
    assert restored.rc.files.keys() == {
        "sample.csv",
        "csv_summary.py",
        "check_csv_summary.py",
        "README.md",
        "BUILD_LOG.md",
    }


async def test_events_at_each_stage(docs: Path, tmp_path: Path) -> None:
    rt = make_runtime(docs, FunctionModel(BuildScript()))
    run = await run_to_end(rt, tmp_path / "out")
    frames = rt.frames(run.id)
    names = [f.name for f in frames if isinstance(f, DataEvent)]
    stages = [
        "shape.chosen",
        "concept.added",
        "constraint.added",
        "plan.step.added",
        "build.file.written",
        "check.passed",
    ]
    positions = [names.index(n) for n in stages]
    assert positions == sorted(positions)
    checkpoint = next(f for f in frames if isinstance(f, PhaseCheckpoint))
    assert checkpoint.phase == "grounding" and checkpoint.requires_approval
    calls = [f for f in frames if isinstance(f, ToolCallFrame)]
    assert [c.tool_name for c in calls] == ["python"] * 3
    assert all(c.reasoning.startswith("check '") for c in calls)


async def test_the_small_model_path_uses_the_known_good_shape(docs: Path, tmp_path: Path) -> None:
    # the small model only writes the README's sentence; this one invents a feature, so the
    # shape's own description is used
    model = ScriptedModel(["A CSV summary tool that also draws charts and sends email reports."])
    model.answer_style = "extractive"  # type: ignore[attr-defined]
    rt = make_runtime(docs, model)
    out = tmp_path / "out"
    run = await run_to_end(rt, out, goal="a script that deduplicates my photo folder")
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert result["program"] == "Duplicate file finder" and result["complete"]
    assert {r["origin"] for p, r in result["files"].items() if p != "BUILD_LOG.md"} == {"template"}
    assert "draws charts" not in (out / "README.md").read_text()
    checked = check_in_clean_shell(out, result["check_command"])
    assert checked.returncode == 0, checked.stderr
    model.assert_consumed()


def test_every_shape_passes_its_own_checks(tmp_path: Path) -> None:
    for name in shape_names():
        shape = load_shape(name)
        folder = tmp_path / name
        workspace = Workspace(folder)
        for step in shape.steps:
            for path in step.files:
                text = shape.template(path)
                if path == "README.md":
                    text = readme_text(shape, goal="g")
                workspace.write(path, text)
        checked = check_in_clean_shell(folder, shape.check)
        assert checked.returncode == 0, (name, checked.stderr)


def test_a_shape_is_chosen_only_for_a_goal_that_asks_for_what_it_does() -> None:
    def chosen(goal: str, preferred: str = "") -> str | None:
        shape = choose_shape(goal, preferred)[0]
        return shape.name if shape else None

    assert chosen("count the words of my notes") == "word_frequency"
    assert chosen("a script that deduplicates my photo folder") == "duplicate_finder"
    assert chosen("print statistics for each column of a spreadsheet") == "csv_summary"
    # sharing one word ("table", "count", "files") with a shape is not asking for it
    assert (
        chosen("a tool that prints a table of contents from the headings of a Markdown file")
        is None
    )
    assert chosen("summarize the columns of a Markdown table") is None
    assert chosen("a tool that counts lines of code") is None
    assert chosen("a csv to json converter") is None
    assert chosen("a web server") is None
    # a model's preferred shape is used only when it fits
    assert chosen("count the words of my notes", "csv_summary") == "word_frequency"


async def test_the_small_model_refuses_a_goal_no_shape_fits_before_writing(
    docs: Path, tmp_path: Path
) -> None:
    model = ScriptedModel([])
    model.answer_style = "extractive"  # type: ignore[attr-defined]
    rt = make_runtime(docs, model)
    out = tmp_path / "out"
    run = await rt.run("build", {"goal": "a Markdown table of contents", "workspace": str(out)})
    assert run.status == RunStatus.FAILED
    assert "cannot build" in (run.error or "") and "a CSV summary tool" in (run.error or "")
    assert not out.exists()


def test_the_workspace_refuses_paths_outside_it(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "w")
    for bad in ("../x.py", "/etc/passwd", "a/../../x", ""):
        with pytest.raises(ValidationError):
            workspace.path(bad)
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "link").symlink_to(tmp_path)
    with pytest.raises(ValidationError, match="leads outside"):
        workspace.write("link/x.py", "x")
    assert workspace.write("a/b.txt", "hi")["written"] is True
    assert workspace.write("a/b.txt", "hi")["written"] is False  # same content: not written again


def test_a_goal_and_a_workspace_are_required() -> None:
    with pytest.raises(ValidationError, match="non-empty 'goal'"):
        BuildAgent({"goal": " ", "workspace": "w"})
    with pytest.raises(ValidationError, match="'workspace'"):
        BuildAgent({"goal": "g"})


async def test_a_workspace_with_files_in_it_is_refused(docs: Path, tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("keep me")
    rt = make_runtime(docs, FunctionModel(BuildScript()))
    run = await run_to_end(rt, busy)
    assert run.status == RunStatus.FAILED
    assert "is not an empty folder" in (run.error or "")
    assert [p.name for p in busy.iterdir()] == ["mine.txt"]


def toc_program(**changes: Any) -> GoalProgram:
    fields: dict[str, Any] = {
        "module": "toc",
        "title": "Markdown table of contents",
        "sample_name": "sample.md",
        "sample": "# Guide\n\n## Install\n",
        "arguments": ["sample.md"],
        "expected": ["- Guide", "  - Install"],
        **changes,
    }
    return GoalProgram(**fields)


def test_a_program_for_the_goal_needs_a_check_only_a_working_program_passes() -> None:
    goal = "a table of contents of a Markdown file"
    assert program_problem(toc_program(), goal) == ""
    problems = {
        "module": program_problem(toc_program(module="csv"), goal),
        "sample": program_problem(toc_program(sample_name="../x.md"), goal),
        "title": program_problem(toc_program(title="CSV summary tool"), goal),
        "nothing": program_problem(toc_program(expected=[" "]), goal),
        "echo": program_problem(toc_program(expected=["# Guide", "## Install"]), goal),
    }
    assert "would hide a module" in problems["module"]
    assert "not a plain data file name" in problems["sample"]
    assert "does not speak of the goal" in problems["title"]
    assert "expects nothing" in problems["nothing"]
    assert "printing the sample would pass" in problems["echo"]
    shape = goal_shape(toc_program().model_dump(), goal)
    assert shape.run == "python toc.py sample.md" and shape.step("core").model_writes == ("toc.py",)
    assert "'  - Install'" in shape.step("core").accept


async def test_a_capable_model_whose_program_check_stays_unusable_is_refused(
    docs: Path, tmp_path: Path
) -> None:
    def model(messages: list[Any], info: Any) -> Any:
        fields = set((info.output_schema or {}).get("properties") or {})
        if "sample_name" in fields:  # the check would pass for a program that prints its input
            return toc_program(expected=["# Guide"]).model_dump()
        if "shape" in fields:
            return {"shape": "csv_summary", "summary": "", "concepts": [], "constraints": []}
        raise AssertionError(f"unexpected call for {sorted(fields)}")

    rt = make_runtime(docs, FunctionModel(model))
    out = tmp_path / "out"
    run = await rt.run("build", {"goal": "a Markdown table of contents", "workspace": str(out)})
    assert run.status == RunStatus.FAILED
    assert "could not plan a checked program" in (run.error or "")
    assert "printing the sample would pass" in (run.error or "")
    assert not out.exists()  # nothing written
