"""Ctrl-C (SIGINT) or SIGTERM to ``kforge research`` pauses the run, says how to resume it and
exits 130 or 143; ``kforge runs resume`` then completes it. A second Ctrl-C exits at once and the
run still resumes."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from kforge.store import RunStatus, SQLiteStore
from tests.cli.processes import kforge_popen
from tests.cli.schema_endpoint import SchemaEndpoint


def kforge_proc(endpoint: SchemaEndpoint, cwd: Path, *args: str) -> subprocess.Popen[str]:
    env = {"KFORGE_BASE_URL": endpoint.base_url, "OPENAI_API_KEY": "test-key"}
    return kforge_popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE)


def research(endpoint: SchemaEndpoint, db: Path) -> subprocess.Popen[str]:
    return kforge_proc(
        endpoint,
        db.parent,
        "--db",
        str(db),
        "research",
        "What is retrieval-augmented generation?",
        "--model",
        "openai:fake",
        "--yes",
    )


def run_id_of(out: str) -> str:
    return next(line.split()[1] for line in out.splitlines() if line.startswith("run "))


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_pauses_the_run_and_runs_resume_completes_it(
    tmp_path: Path, signum: int, code: int
) -> None:
    db = tmp_path / "k.db"
    with SchemaEndpoint(hold_at=8) as endpoint:
        proc = research(endpoint, db)
        assert endpoint.holding.wait(60)  # mid-run, waiting on the model
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        run_id = run_id_of(err)  # progress and hints go to stderr, results to stdout
        assert f"resume with: kforge --db {db} runs resume {run_id}" in err
        assert "Traceback" not in err
        again = "press Ctrl-C again" if signum == signal.SIGINT else "send the signal again"
        assert f"kforge: pausing the run ({again} to exit at once)" in err
        store = SQLiteStore(db)
        run = store.get_run(run_id)
        store.close()
        assert run.status == RunStatus.PAUSED
        assert run.pause_reason == f"interrupted by {signal.Signals(signum).name}"
        assert run.lease_owner is None
        endpoint.release.set()

        resumed = kforge_proc(
            endpoint, tmp_path, "--db", str(db), "runs", "resume", run_id, "--yes"
        )
        _out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        assert f"run {run_id} completed" in err


def test_a_second_ctrl_c_exits_at_once_and_the_run_still_resumes(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with SchemaEndpoint(hold_at=8) as endpoint:
        proc = research(endpoint, db)
        assert endpoint.holding.wait(60)
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "Traceback" not in err
        run_id = run_id_of(err)
        endpoint.release.set()
        resumed = kforge_proc(
            endpoint, tmp_path, "--db", str(db), "runs", "resume", run_id, "--yes"
        )
        _out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        assert f"run {run_id} completed" in err


def test_ctrl_c_at_a_prompt_stops_the_command_at_once(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with SchemaEndpoint() as endpoint:
        proc = kforge_proc(endpoint, tmp_path, "--db", str(db), "chat", "--model", "test:model")
        assert proc.stderr is not None
        seen = ""
        while not seen.endswith("you> "):  # waiting for a line: no run executes now
            char = proc.stderr.read(1)  # input is piped: prompts go to stderr
            assert char, seen
            seen += char
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "Traceback" not in err


def _run_id_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("run "):
            return line.split()[1]
    raise AssertionError(f"no run line (exit {proc.wait()})")


@pytest.mark.parametrize("interrupt", [None, signal.SIGINT])
def test_a_reader_that_goes_away_pauses_the_run_and_it_resumes(
    tmp_path: Path, interrupt: int | None
) -> None:
    """`kforge research … 2>&1 | head` (the reader closes), or Ctrl-C that ends the reader too."""
    db = tmp_path / "k.db"
    with SchemaEndpoint(hold_at=8) as endpoint:
        proc = research(endpoint, db)
        run_id = _run_id_line(proc)
        assert endpoint.holding.wait(60)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()
        if interrupt is not None:
            proc.send_signal(interrupt)
        endpoint.release.set()
        proc.wait(timeout=60)
        store = SQLiteStore(db)
        run = store.get_run(run_id)
        store.close()
        assert run.status == RunStatus.PAUSED, run.status
        expected = "interrupted by SIGINT" if interrupt else "its output was closed (broken pipe)"
        assert run.pause_reason == expected
        resumed = kforge_proc(
            endpoint, tmp_path, "--db", str(db), "runs", "resume", run_id, "--yes"
        )
        _out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        assert f"run {run_id} completed" in err


def _paused_research(endpoint: SchemaEndpoint, db: Path, report: Path) -> str:
    first = kforge_proc(
        endpoint,
        db.parent,
        "--db",
        str(db),
        "research",
        "What is retrieval-augmented generation?",
        "--model",
        "openai:fake",
        "--yes",
        "--max-steps",
        "3",
        "-o",
        str(report),
    )
    out, err = first.communicate(timeout=120)
    assert first.returncode == 4, err  # paused by the step limit, partial report written
    assert f"partial report written to {report}" in out
    return run_id_of(err)


def _resume_to_the_end(
    endpoint: SchemaEndpoint, cwd: Path, db: Path, run_id: str, *options: str
) -> tuple[str, str]:
    resumed = kforge_proc(
        endpoint,
        cwd,
        "--db",
        str(db),
        "runs",
        "resume",
        run_id,
        "--max-steps",
        "500",
        "--yes",
        *options,
    )
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    return out, err


def test_the_report_file_of_research_o_is_kept_for_runs_resume(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    chosen = tmp_path / "out" / "mine.md"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with SchemaEndpoint() as endpoint:
        run_id = _paused_research(endpoint, db, chosen)
        partial = chosen.read_text()
        out, _ = _resume_to_the_end(endpoint, elsewhere, db, run_id)
        assert f"report written to {chosen}" in out
        assert chosen.read_text() != partial
        assert not (elsewhere / "reports").exists()

        # resumed with -o elsewhere: the new file is written and the earlier one named
        second = tmp_path / "second.md"
        run_id = _paused_research(endpoint, db, second)
        other = tmp_path / "other.md"
        out, err = _resume_to_the_end(endpoint, elsewhere, db, run_id, "-o", str(other))
        assert f"report written to {other}" in out
        assert f"an earlier report of this run is in {second}" in err


def test_runs_cancel_from_another_terminal_stops_a_live_run_at_its_next_step(
    tmp_path: Path,
) -> None:
    db = tmp_path / "k.db"
    with SchemaEndpoint(hold_at=8) as endpoint:
        proc = research(endpoint, db)
        run_id = _run_id_line(proc)
        assert endpoint.holding.wait(60)  # mid-step, waiting on the model
        cancel = kforge_proc(endpoint, tmp_path, "--db", str(db), "runs", "cancel", run_id)
        out, err = cancel.communicate(timeout=60)
        assert cancel.returncode == 0, err
        assert out.startswith(f"cancel requested: run {run_id} executes in another process")
        endpoint.release.set()
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 1, err
        assert f"run {run_id} cancelled" in err
        store = SQLiteStore(db)
        run = store.get_run(run_id)
        frames = store.read_frames(run_id)
        store.close()
        assert run.status == RunStatus.CANCELLED
        assert [f.to_status for f in frames if f.type == "status.changed"][-1] == "cancelled"
        assert any(f.type == "intervention" and f.action == "cancel" for f in frames)


def test_chat_with_piped_questions_writes_only_answers_to_stdout(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with SchemaEndpoint() as endpoint:
        proc = kforge_proc(endpoint, tmp_path, "--db", str(db), "chat", "--model", "test:model")
        out, err = proc.communicate("What is a checkpoint?\n", timeout=120)
        assert proc.returncode == 0, err
        assert "you> " in err and "continue it later with" in err and "bye; continue" in err
        for chatter in ("you> ", "kforge> ", "session ", "Commands:", "bye"):
            assert chatter not in out
        assert "[1]" in out and "Sources:" in out


def test_a_chat_turn_paused_by_ctrl_c_is_answered_when_the_session_continues(
    tmp_path: Path,
) -> None:
    db = tmp_path / "k.db"
    with SchemaEndpoint(hold_at=2) as endpoint:
        chat = ("--db", str(db), "chat", "--model", "openai:fake")
        proc = kforge_proc(endpoint, tmp_path, *chat)
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write("What is a checkpoint?\n")
        proc.stdin.flush()
        session = next(
            line.split()[1].rstrip(";") for line in proc.stderr if line.startswith("session ")
        )
        assert endpoint.holding.wait(60)  # the turn is waiting on the model
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        endpoint.release.set()
        again = kforge_proc(endpoint, tmp_path, *chat, "--session", session)
        out, err = again.communicate("", timeout=120)
        assert again.returncode == 0, err
        assert "your last question was interrupted; answering it now: What is a checkpoint?" in err
        assert out.strip()  # its answer
    store = SQLiteStore(db)
    runs = store.list_runs(session_id=session)
    store.close()
    assert [r.status for r in runs] == [RunStatus.COMPLETED]
