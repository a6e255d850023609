"""``kforge runs``: list, show, explain, resume, fork and export against a real database."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kforge.cli import main
from kforge.llm.scripted import ScriptedModel
from kforge.runtime import Runtime, default_registry
from kforge.store import RunRecord, RunStatus, SQLiteStore
from tests.engine.sample_agents import CounterAgent, DraftAgent


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    for cls in (DraftAgent, CounterAgent):
        default_registry.register(cls.agent_type, cls, replace=True)
    yield


def start_draft(db: Path, replies: list[Any]) -> str:
    async def go() -> str:
        rt = Runtime(SQLiteStore(db), model=ScriptedModel(replies))
        run = await rt.run("test.draft", {"topic": "t"})
        return run.id

    return asyncio.run(go())


def use_model(monkeypatch: pytest.MonkeyPatch, model: ScriptedModel) -> None:
    import kforge.cli._common as common

    original = common.open_runtime

    def patched(args: Any, **kw: Any) -> Runtime:
        rt = original(args, **kw)
        rt._model = model
        return rt

    monkeypatch.setattr(common, "open_runtime", patched)
    import kforge.cli.runs as runs

    monkeypatch.setattr(runs, "open_runtime", patched)


def test_list_show_explain_resume_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    assert main(["--db", str(db), "runs", "list"]) == 0
    out = capsys.readouterr().out
    assert run_id in out and "awaiting_user" in out and "asks: Approve the draft items?" in out

    assert main(["--db", str(db), "runs", "show", run_id]) == 0
    out = capsys.readouterr().out
    assert "options    approve, modify, reject" in out

    use_model(
        monkeypatch,
        ScriptedModel([{"verdict": "more", "detail": "thin"}, {"items": ["b"]}, {"verdict": "ok"}]),
    )
    assert main(["--db", str(db), "runs", "resume", run_id, "--answer", "approve", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "BACK review → draft (visit 2) because needs_more_material — thin" in out
    assert f"run {run_id} completed" in out

    assert main(["--db", str(db), "runs", "explain", run_id]) == 0
    out = capsys.readouterr().out
    for needle in (
        "start in draft",
        "checkpoint",
        "ask ",
        "answer",
        "BACK review → draft",
        "complete",
        "phases: draft → review → draft → review → publish → complete",
        "backward: 1",
        "questions: 2",
    ):
        assert needle in out, needle

    target = tmp_path / "run.jsonl"
    assert main(["--db", str(db), "runs", "export", run_id, "-o", str(target)]) == 0
    lines = target.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, len(lines) + 1))


def test_fork_then_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    assert main(["--db", str(db), "runs", "fork", run_id, "--at", "4"]) == 0
    new_id = capsys.readouterr().out.split()[3].rstrip(";")
    use_model(monkeypatch, ScriptedModel([{"verdict": "ok"}]))
    assert main(["--db", str(db), "runs", "resume", new_id, "--yes"]) == 0
    assert f"run {new_id} completed" in capsys.readouterr().out


def test_bad_run_ids_and_answers_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    assert main(["--db", str(db), "runs", "explain", "missing"]) == 1
    assert "no run with id 'missing'" in capsys.readouterr().err
    run_id = start_draft(db, [{"items": ["a"]}])
    assert main(["--db", str(db), "runs", "resume", run_id, "--answer", "perhaps"]) == 1
    assert "must be one of approve, modify, reject" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--db", str(db), "runs", "fork"])


def test_list_tells_live_runs_from_interrupted_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kforge.frames import StatusChanged
    from kforge.store.lease import Lease

    db = tmp_path / "k.db"
    store = SQLiteStore(db)
    for run_id, lease in (
        ("live-run", Lease(owner="otherhost:7:abc")),
        ("crashed-run", Lease(owner="otherhost:8:def", ttl_s=-1)),
    ):
        store.create_run(new_record(run_id))
        store.commit(
            run_id,
            [StatusChanged(run_id=run_id, seq=1, from_status="pending", to_status="running")],
            run_fields={"status": RunStatus.RUNNING},
            lease=lease,
        )
    store.close()
    assert main(["--db", str(db), "runs", "list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert " running " in lines["live-run"] and "live in otherhost:7:abc" in lines["live-run"]
    assert " interrupted " in lines["crashed-run"]
    assert "kforge runs resume crashed-run" in lines["crashed-run"]


def new_record(run_id: str) -> RunRecord:
    from kforge.frames import utc_now

    now = utc_now()
    return RunRecord(
        id=run_id,
        agent_type="test.counter",
        status=RunStatus.PENDING,
        created_at=now,
        updated_at=now,
        input={"args": {}},
    )
