"""Understand killed with SIGKILL in the middle of TEACH, and Build in the middle of MAKING,
resume in a new process exactly: the model calls, sandbox checks and file writes of the killed
and resumed run are those of a run that was never killed, none done twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from kforge.store import RunStatus, SQLiteStore
from tests.agents.knowledge_scripts import check_in_clean_shell, write_docs

WORKER = Path(__file__).with_name("knowledge_worker.py")


def worker(
    db: Path, log: Path, agent: str, args: dict[str, Any], *rest: str, kill: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KILL_AT": kill}
    return subprocess.run(
        [sys.executable, str(WORKER), str(db), str(log), agent, json.dumps(args), *rest],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def run_twice(tmp_path: Path, agent: str, args: dict[str, Any], kill: str) -> tuple[Any, ...]:
    """The same run twice: straight through, and killed at ``kill`` then resumed."""
    outcomes = []
    for label, kill_at in (("once", ""), ("kill", kill)):  # same length: outputs cut alike
        root = tmp_path / label
        (root / "docs").mkdir(parents=True)
        (root / "out").mkdir()
        db, log = root / "runs.db", root / "effects.log"
        full = {
            **args,
            "docs_folder": str(write_docs(root / "docs")),
            "corpus": "docs",
            **({"workspace": str(root / "out")} if agent == "build" else {}),
        }
        first = worker(db, log, agent, full, kill=kill_at)
        run_id = first.stdout.split()[0]
        if kill_at:
            assert first.returncode == -signal.SIGKILL, first.stderr
            store = SQLiteStore(db)
            # it died mid-run; an answer not yet committed with a step is asked again
            assert store.get_run(run_id).status in (RunStatus.RUNNING, RunStatus.AWAITING_USER)
            store.close()
            second = worker(db, log, agent, full, run_id)
            assert second.returncode == 0, second.stderr
            assert second.stdout.split()[1] == "completed", second.stdout
        else:
            assert first.returncode == 0, first.stderr
            assert first.stdout.split()[1] == "completed", first.stdout
        store = SQLiteStore(db)
        result = store.get_run(run_id).result or {}
        store.close()
        outcomes.append((log.read_text().splitlines(), result, root))
    return tuple(outcomes)


def test_understand_killed_in_the_middle_of_teach_resumes_exactly(tmp_path: Path) -> None:
    straight, killed = run_twice(tmp_path, "understand", {"topic": "human checkpoints"}, "grade:2")
    effects, result, _ = killed
    assert effects == straight[0]
    assert [line.split()[1] for line in effects].count("grade") == 2
    assert [o["status"] for o in result["objectives"]] == ["passed", "passed"]
    assert result["report"] == straight[1]["report"]


def test_build_killed_in_the_middle_of_making_resumes_exactly(tmp_path: Path) -> None:
    straight, killed = run_twice(tmp_path, "build", {"goal": "a CSV summary tool"}, "code:2")
    effects, result, root = killed
    assert effects == straight[0]
    checks = [line for line in effects if line.startswith("check ")]
    assert len(checks) == 4  # sample, core (failed), core again, readme: none run twice
    writes = [line for line in effects if line.startswith("write ")]
    assert writes.count("write csv_summary.py") == 2  # the broken module, then the good one
    assert writes.count("write sample.csv") == 1 and writes.count("write BUILD_LOG.md") == 1
    assert result["complete"]
    checked = check_in_clean_shell(root / "out", "python check_csv_summary.py")
    assert checked.returncode == 0, checked.stderr
