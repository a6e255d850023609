"""The conformance suite as a third-party store runs it: a module of its own, outside this
project's tests, subclassing the suite of the protocol its store implements
(``kforge.store.conformance``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

THIRD_PARTY = '''
import pytest

from kforge.store.conformance import {suite}
from kforge.store.memory_passages import MemoryPassageStore
from kforge.store.memory_runs import MemoryRunLog


class ForgetfulRunLog(MemoryRunLog):
    """Reads every frame whatever ``after_seq`` asks for."""

    def read_frames(self, run_id, *, after_seq=0, limit=None):
        return super().read_frames(run_id)


class LosingPassageStore(MemoryPassageStore):
    """Forgets the first passage of every source it is given."""

    def put_sources(self, index, sources):
        from dataclasses import replace

        super().put_sources(index, [replace(s, passages=s.passages[1:]) for s in sources])


class TestMyStore({suite}):
    @pytest.fixture
    def store(self):
        store = {store}()
        yield store
        store.close()
'''


def run_suite(tmp_path: Path, suite: str, store: str) -> subprocess.CompletedProcess[str]:
    module = tmp_path / "test_my_store.py"
    module.write_text(THIRD_PARTY.format(suite=suite, store=store))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("suite", "store"),
    [("RunLogConformance", "MemoryRunLog"), ("PassageStoreConformance", "MemoryPassageStore")],
)
def test_a_store_of_one_half_runs_that_half_s_suite_and_passes(
    tmp_path: Path, suite: str, store: str
) -> None:
    done = run_suite(tmp_path, suite, store)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_a_store_of_both_halves_runs_both_suites(tmp_path: Path) -> None:
    done = run_suite(tmp_path, "StoreConformance", "__import__('kforge').MemoryStore")
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout


@pytest.mark.parametrize(
    ("suite", "store", "failing"),
    [
        (
            "RunLogConformance",
            "ForgetfulRunLog",
            "test_commit_appends_frames_step_and_fields_together",
        ),
        ("PassageStoreConformance", "LosingPassageStore", "test_ingest_then_read_and_search"),
    ],
)
def test_a_store_that_breaks_the_contract_fails_the_suite(
    tmp_path: Path, suite: str, store: str, failing: str
) -> None:
    done = run_suite(tmp_path, suite, store)
    assert done.returncode == 1, done.stdout + done.stderr
    assert failing in done.stdout


@pytest.mark.parametrize("suite", ["RunLogConformance", "PassageStoreConformance"])
def test_each_suite_says_what_to_override(suite: str) -> None:
    from kforge.store import conformance

    cls = getattr(conformance, suite)
    with pytest.raises(NotImplementedError, match="must override the 'store' fixture"):
        cls.store.__wrapped__(cls())
