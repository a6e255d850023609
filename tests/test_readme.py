"""The agent tree example of the documentation (docs/tree.md) runs as written, in a fresh process
and folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kforge

TREE_DOC = Path(__file__).resolve().parents[1] / "docs" / "tree.md"
SRC = Path(kforge.__file__).resolve().parents[1]


def tree_example() -> str:
    found = re.search(r"```python\n(.*?)```", TREE_DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert found is not None, "the agent tree page has a Python example"
    return found.group(1)


def run_example(tmp_path: Path, model: str | None) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "example.py"
    script.write_text(tree_example(), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("KFORGE_MODEL", None)
    if model is not None:
        env["KFORGE_MODEL"] = model
    return subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )


def check(done: subprocess.CompletedProcess[str], tmp_path: Path) -> None:
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.endswith(" completed") for line in lines)
    assert lines[-1].endswith("completed How do agents keep a human in the loop?") or any(
        "completed How do agents keep a human in the loop?" in line for line in lines
    )
    assert (tmp_path / "tree.db").exists()


def test_the_tree_example_runs_with_a_test_model(tmp_path: Path) -> None:
    check(run_example(tmp_path, "test"), tmp_path)


@pytest.mark.slow
def test_the_tree_example_runs_as_written_with_the_bundled_model(tmp_path: Path) -> None:
    done = run_example(tmp_path, None)
    check(done, tmp_path)
    assert "[1]" in done.stdout  # a cited answer from the sample documents
