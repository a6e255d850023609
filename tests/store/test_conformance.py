"""The conformance suite as a third-party store runs it: a module of its own, outside this
project's tests, subclassing ``kforge.store.conformance.StoreConformance``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

THIRD_PARTY = '''
import pytest

from kforge.store.conformance import StoreConformance
from kforge.store.memory import MemoryStore


class ForgetfulStore(MemoryStore):
    """Reads every frame whatever ``after_seq`` asks for."""

    def read_frames(self, run_id, *, after_seq=0, limit=None):
        return super().read_frames(run_id)


class TestMemoryStore(StoreConformance):
    @pytest.fixture
    def store(self):
        yield {store}()
'''


def run_suite(tmp_path: Path, store: str) -> subprocess.CompletedProcess[str]:
    module = tmp_path / "test_my_store.py"
    module.write_text(THIRD_PARTY.format(store=store))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_third_party_store_runs_the_suite_and_passes(tmp_path: Path) -> None:
    done = run_suite(tmp_path, "MemoryStore")
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_a_store_that_breaks_the_contract_fails_the_suite(tmp_path: Path) -> None:
    done = run_suite(tmp_path, "ForgetfulStore")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_commit_appends_frames_step_and_fields_together" in done.stdout


def test_the_suite_says_what_to_override() -> None:
    from kforge.store.conformance import StoreConformance

    with pytest.raises(NotImplementedError, match="must override the 'store' fixture"):
        StoreConformance.store.__wrapped__(StoreConformance())  # type: ignore[attr-defined]
