"""``kforge intervene`` and ``kforge tree`` through the entry point: an intervention is typed
(the flag is the action, its text the content), so a comment that says "delete" is a comment."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import kforge
from kforge.frames import Intervention
from kforge.runtime import Runtime
from kforge.store import RunStatus, SQLiteStore
from tests.agents.tree_model import TreeScript

SRC = Path(kforge.__file__).resolve().parents[1]
PARTY = "Plan my birthday party"


def kforge_cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "kforge", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=db.parent,
        timeout=120,
        check=False,
    )


async def parked_tree(db: Path) -> str:
    """A tree agent waiting for its clarifying question's answer (no process executes it)."""
    rt = Runtime(SQLiteStore(db), model=TreeScript(ambiguous=(PARTY,)).model())
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.AWAITING_USER
    rt.store.close()
    return run.id


def test_a_comment_whose_text_is_an_action_is_a_comment(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    root = asyncio.run(parked_tree(db))
    for text in ("delete", "modify"):
        done = kforge_cli(db, "intervene", root[:10], "--comment", text)
        assert done.returncode == 0, done.stderr
        assert f"comment recorded for agent {root}" in done.stderr
    store = SQLiteStore(db)
    run = store.get_run(root)
    said = [(f.action, f.content) for f in store.read_frames(root) if isinstance(f, Intervention)]
    store.close()
    assert run.status == RunStatus.AWAITING_USER  # neither deleted nor modified
    assert said == [("comment", "delete"), ("comment", "modify")]
    shown = kforge_cli(db, "tree", root)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0].endswith(f"{PARTY}  [comment: modify]")
    deleted = kforge_cli(db, "intervene", root, "--delete")
    assert deleted.returncode == 0, deleted.stderr
    assert kforge_cli(db, "tree", root).stdout.startswith(f"deleted       {root[:8]}")
