"""``kforge runs``: list, show, explain, resume, fork and export against a real database."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kforge
from kforge.cli import main
from kforge.frames import utc_now
from kforge.llm.testing.scripted import ScriptedModel
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
    assert out.splitlines()[0].split() == ["RUN", "AGENT", "STATUS", "AGE", "QUESTION", "/", "NOTE"]
    row = out.splitlines()[1]
    assert row.startswith(run_id[:12]) and "test.draft" in row and "awaiting_user" in row
    assert re.search(r" \d+s ago ", row) and "t — asks: Approve the draft items?" in row

    # a prefix works, --db may follow the command, and the pending question is rendered
    assert main(["runs", "show", run_id[:8], "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"run        {run_id}" in out
    assert "waiting    checkpoint: Approve the draft items?" in out
    assert "options    approve, modify, reject" in out
    assert f"answer     kforge --db {db} runs resume {run_id} --answer approve" in out
    assert "where modifications may hold:\n             items  the draft's items" in out

    use_model(
        monkeypatch,
        ScriptedModel([{"verdict": "more", "detail": "thin"}, {"items": ["b"]}, {"verdict": "ok"}]),
    )
    assert (
        main(["--db", str(db), "runs", "resume", run_id[:6], "--answer", "approve", "--yes"]) == 0
    )
    out, err = capsys.readouterr()
    assert "BACK review → draft (visit 2) because needs_more_material — thin" in err
    assert f"run {run_id} completed" in err and out == ""

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
    out = capsys.readouterr().out
    new_id = out.split()[3].rstrip(";")
    hint = out.split("continue it with: ")[1].strip()
    assert hint == f"kforge --db {db} runs resume {new_id}"
    use_model(monkeypatch, ScriptedModel([{"verdict": "ok"}]))
    # the printed hint, pasted as it is
    assert main([*shlex.split(hint)[1:], "--yes"]) == 0
    assert f"run {new_id} completed" in capsys.readouterr().err


def test_fork_at_zero_is_refused_and_leaves_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    assert main(["--db", str(db), "runs", "fork", run_id, "--at", "0"]) == 1
    assert "cannot fork run" in capsys.readouterr().err
    store = SQLiteStore(db)
    assert [r.id for r in store.list_runs()] == [run_id]
    store.close()


def test_bad_run_ids_and_answers_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    assert main(["--db", str(db), "runs", "explain", "missing"]) == 1
    assert capsys.readouterr().err == (
        f"kforge: error: no run with id 'missing'; list runs with: kforge --db {db} runs list\n"
    )
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
    assert f"kforge --db {db} runs resume crashed-run" in lines["crashed-run"]


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


def test_an_ambiguous_prefix_lists_the_candidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    store = SQLiteStore(db)
    first, second = "abc1" + "0" * 28, "abc2" + "0" * 28
    for run_id in (first, second):
        now = utc_now()
        store.create_run(RunRecord(run_id, "test.draft", RunStatus.PAUSED, now, now))
    store.close()
    assert main(["--db", str(db), "runs", "show", ""]) == 1
    assert "no run with id ''" in capsys.readouterr().err
    assert main(["--db", str(db), "runs", "show", "abc"]) == 1
    err = capsys.readouterr().err
    assert (
        err
        == f"kforge: error: run id prefix 'abc' fits 2 runs ({first}, {second}); type more of the id\n"
    )
    assert main(["--db", str(db), "runs", "show", "abc2"]) == 0
    assert f"run        {second}" in capsys.readouterr().out


def test_modify_answers_with_unknown_keys_are_refused_naming_the_allowed_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    bad = json.dumps({"action": "modify", "modifications": {"itemz": ["x"]}})
    assert main(["--db", str(db), "runs", "resume", run_id, "--answer", bad]) == 1
    err = capsys.readouterr().err
    assert "kforge: error: 'modifications' has unknown key(s) itemz; allowed: items" in err
    store = SQLiteStore(db)
    assert store.get_run(run_id).status == RunStatus.AWAITING_USER  # nothing was recorded
    store.close()
    use_model(monkeypatch, ScriptedModel([{"items": ["x"]}, {"verdict": "ok"}]))
    good = json.dumps({"action": "modify", "modifications": {"items": ["x"]}})
    assert main(["--db", str(db), "runs", "resume", run_id, "--answer", good, "--yes"]) == 0


def test_cancel_and_delete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    store = SQLiteStore(db)
    child = RunRecord(
        id="c" * 32,
        agent_type="test.draft",
        status=RunStatus.COMPLETED,
        created_at=utc_now(),
        updated_at=utc_now(),
        parent_id=run_id,
    )
    store.create_run(child)
    assert main(["--db", str(db), "runs", "cancel", run_id[:8]]) == 0
    out = capsys.readouterr().out
    assert f"cancelled run {run_id}" in out
    assert main(hint_after(out, "see them with: ")) == 0
    assert "cancelled" in capsys.readouterr().out
    assert store.get_run(run_id).status == RunStatus.CANCELLED
    assert main(["--db", str(db), "runs", "cancel", run_id]) == 1
    assert "already cancelled" in capsys.readouterr().err

    running = start_draft(db, [{"items": ["a"]}])
    store.commit(running, [], run_fields={"status": RunStatus.RUNNING})
    assert main(["--db", str(db), "runs", "delete", running]) == 1
    err = capsys.readouterr().err
    assert "is running; stop it first with: kforge --db" in err
    assert [r.id for r in store.list_runs()].count(running) == 1
    assert main(hint_after(err, "stop it first with: ")) == 0  # the run's process is gone
    assert store.get_run(running).status == RunStatus.CANCELLED

    assert main(["--db", str(db), "runs", "delete", run_id]) == 0
    assert "and 1 child run(s)" in capsys.readouterr().out
    assert [r.id for r in store.list_runs()] == [running]
    assert store.read_frames(run_id) == [] and store.latest_snapshot(run_id) is None
    store.close()


def test_outputs_are_checked_before_work_and_closed_pipes_are_quiet(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    env = {**os.environ, "PYTHONPATH": str(Path(kforge.__file__).parents[1])}
    cli = [sys.executable, "-m", "kforge", "--db", str(db)]
    missing = subprocess.run(
        [*cli, "runs", "export", run_id, "-o", str(tmp_path / "missing" / "dir" / "x")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.startswith("kforge: error: cannot write")
    assert "does not exist" in missing.stderr
    # `runs explain RUN | head`, with the reader gone before anything is written
    read_end, write_end = os.pipe()
    os.close(read_end)
    closed = subprocess.run(
        [*cli, "runs", "explain", run_id], stdout=write_end, stderr=subprocess.PIPE, env=env
    )
    os.close(write_end)
    assert closed.returncode == 141, closed.stderr
    assert closed.stderr == b""


def hint_after(text: str, label: str) -> list[str]:
    """The command printed after ``label``, split as a shell would, without ``kforge``."""
    line = next(line for line in text.splitlines() if label in line)
    return shlex.split(line.split(label, 1)[1])[1:]


def test_waiting_and_paused_runs_exit_3_and_4_and_their_hints_run_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    use_model(
        monkeypatch,
        ScriptedModel([{"verdict": "more", "detail": "thin"}, {"items": ["b"]}, {"verdict": "ok"}]),
    )
    # approved, reviewed as too thin, drafted again: waiting for a person again
    assert main(["--db", str(db), "runs", "resume", run_id, "--answer", "approve"]) == 3
    err = capsys.readouterr().err
    assert f"run {run_id} is waiting: Approve the draft items?" in err
    assert main(hint_after(err, "see the question with: ")) == 0
    assert "waiting    checkpoint" in capsys.readouterr().out

    # a step limit below what the run needs: paused by the limit
    pasted = hint_after(err, "answer with: ")
    assert pasted[:2] == ["--db", str(db)]
    assert main([*pasted, "--max-steps", "5"]) == 4
    err = capsys.readouterr().err
    assert f"run {run_id} paused (" in err
    assert main([*hint_after(err, "continue with: "), "--max-steps", "60"]) == 0
    assert f"run {run_id} completed" in capsys.readouterr().err


class TerminalInput(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_resume_on_a_terminal_asks_the_pending_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "k.db"
    run_id = start_draft(db, [{"items": ["a"]}])
    use_model(
        monkeypatch,
        ScriptedModel([{"verdict": "more", "detail": "thin"}, {"items": ["b"]}, {"verdict": "ok"}]),
    )
    monkeypatch.setattr(sys, "stdin", TerminalInput("approve\napprove\n"))
    assert main(["--db", str(db), "runs", "resume", run_id]) == 0
    err = capsys.readouterr().err
    assert err.count("? Approve the draft items?") == 2
    assert "answer [approve/modify/reject]" in err and "with keys items" in err
    assert f"run {run_id} completed" in err


def test_reading_commands_create_no_database_and_say_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "nodir" / "sub" / "x.db"
    assert main(["--db", str(db), "runs", "list"]) == 0
    assert capsys.readouterr().out.startswith("no runs yet; start one with:")
    for command in (["runs", "show", "abc"], ["runs", "explain", "abc"], ["tree", "abc"]):
        assert main(["--db", str(db), *command]) == 1
        assert capsys.readouterr().err == (
            f"kforge: error: no database at {db}: nothing has been recorded there yet; "
            "check --db (or KFORGE_DB)\n"
        )
    assert not (tmp_path / "nodir").exists()


def test_runs_list_limits_and_filters_say_what_matched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    start_draft(db, [{"items": ["a"]}])
    assert main(["--db", str(db), "runs", "list", "--limit", "0"]) == 2
    assert "kforge: error: --limit must be at least 1 (got 0)" in capsys.readouterr().err
    assert main(["--db", str(db), "runs", "list", "--status", "failed"]) == 0
    assert capsys.readouterr().out == f"no failed runs; every run: kforge --db {db} runs list\n"


def test_an_unknown_option_is_named_with_its_command_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["ask", "a question", "--bogus"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: kforge ask")
    assert err.endswith("kforge ask: error: unrecognized arguments: --bogus\n")
    with pytest.raises(SystemExit):
        main(["runs", "list", "--bogus"])
    assert "kforge runs list: error: unrecognized arguments: --bogus" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["ask", "--help"])
    assert "-k N, --top-k N" in capsys.readouterr().out
