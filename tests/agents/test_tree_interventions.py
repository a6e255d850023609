"""An intervention on a tree agent survives a SIGKILL at every write around it: the process dies
just before each write that follows the intervention (so after every frame, step and inbox
commit), a new process resumes the run, and the intervention is applied exactly once, with
nothing recorded requested again."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kforge.frames import Frame, Intervention
from kforge.runtime import Runtime
from kforge.store import RunStatus, SQLiteStore
from tests.agents.tree_model import TreeScript

WORKER = Path(__file__).with_name("intervention_worker.py")
PICNIC = "Plan a picnic instead"
NOTE = "keep it cheap"
STEERED = ("Re-planning", "User comment")
"""How the tree agent's thinking begins when it applies a modify or a comment."""
WRITES = 14
"""More writes than the run makes after the intervention: the last kill points never fire."""


def steered(db: Path, action: str, content: str, kill_at: int) -> tuple[str, int, list[str]]:
    """Start the worker; returns the root's id, how the process ended and what else it said."""
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(db), action, content, str(kill_at)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.stdout, proc.stderr
    said = proc.stdout.split()
    return said[0], proc.returncode, said[1:]


def shape(frames: list[Frame]) -> list[tuple[str, str]]:
    """What a run did, without the status changes a kill and a resume add and without the
    intervention's own frames (a kill before the run took it moves it to the resumed
    process's first step boundary): each frame's type and what it says."""
    said = []
    for f in frames:
        detail = getattr(f, "purpose", "") or getattr(f, "message", "") or getattr(f, "name", "")
        detail = str(detail or getattr(f, "to_phase", ""))
        if f.type in ("status.changed", "intervention") or detail.startswith(STEERED):
            continue
        said.append((f.type, detail))
    return said


def steering(frames: list[Frame]) -> list[str]:
    """What the agent said as it applied interventions."""
    return [f.message for f in frames if getattr(f, "message", "").startswith(STEERED)]


async def finish(db: Path, root: str) -> tuple[Any, list[Frame], list[Any], int]:
    """Resume the run to its end; returns it, its frames, what is left in its inbox, and how
    many model calls the resumed process made that the log did not hold."""
    script = TreeScript()
    rt = Runtime(SQLiteStore(db), model=script.model())
    recorded = sum(1 for f in rt.frames(root) if f.type == "model.call")
    if rt.get_run(root).status != RunStatus.COMPLETED:
        await rt.resume(root)
    run = await rt.wait(root)
    frames = rt.frames(root)
    waiting = rt.interventions.pending(root)
    await rt.aclose()
    asked_again = len(script.calls) - (sum(1 for f in frames if f.type == "model.call") - recorded)
    return run, frames, waiting, asked_again


@pytest.fixture(scope="module")
def uninterrupted(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[list[tuple[str, str]], int]]:
    """Per action, the run's shape without a kill and how many writes follow the intervention."""
    runs = {}
    for action, content in (("modify", PICNIC), ("comment", NOTE)):
        db = tmp_path_factory.mktemp(action) / "k.db"
        root, code, said = steered(db, action, content, 0)
        assert code == 0 and said[0] == "completed"
        assert int(said[1]) < WRITES  # so every write gets its kill
        store = SQLiteStore(db)
        runs[action] = (shape(store.read_frames(root)), int(said[1]))
        store.close()
    return runs


@pytest.mark.parametrize("kill_at", range(1, WRITES + 1))
@pytest.mark.parametrize(("action", "content"), [("modify", PICNIC), ("comment", NOTE)])
async def test_a_kill_at_every_write_after_an_intervention_applies_it_once(
    tmp_path: Path,
    uninterrupted: dict[str, tuple[list[tuple[str, str]], int]],
    action: str,
    content: str,
    kill_at: int,
) -> None:
    db = tmp_path / "k.db"
    expected, writes = uninterrupted[action]
    root, code, _ = steered(db, action, content, kill_at)
    assert code == (-signal.SIGKILL if kill_at <= writes else 0)
    run, frames, waiting, asked_again = await finish(db, root)
    assert run.status == RunStatus.COMPLETED, run.error
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert [(f.action, f.content) for f in frames if isinstance(f, Intervention)] == [
        (action, content)
    ]
    assert waiting == []  # nothing is left in the inbox
    assert len(steering(frames)) == 1  # applied once
    # the same run as without the kill, and no recorded model reply asked again
    assert shape(frames) == expected
    assert asked_again == 0
    metadata = (run.result or {})["metadata"]
    if action == "modify":
        assert metadata["modifications"] == [PICNIC]
        assert (run.result or {})["answer"].startswith(f"Answer about {PICNIC}.")
    else:
        assert metadata["comments"] == [NOTE]
        assert f"Noted: {NOTE}." in (run.result or {})["answer"]
