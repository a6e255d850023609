"""Snapshots read lazily for a resume: their checksum checked at once, their state decoded on
first use (or read another way from ``Snapshot.data``), equal to one read at once."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from kforge.errors import StateCorruptionError
from kforge.jsoncodec import dumps
from kforge.store.base import Snapshot
from kforge.store.conformance import new_run
from kforge.store.records import checksum, decode_snapshot
from kforge.store.sqlite import SQLiteStore

STATE = {"agent": {"notes": ["é", {"deep": [1, 2**70]}]}, "runtime": {"usage": {"requests": 1}}}


def test_a_lazy_snapshot_decodes_its_state_on_first_use() -> None:
    text = dumps(STATE)
    row = (3, 7, text.encode(), checksum(text))
    lazy = decode_snapshot("r1", row, lazy=True)
    assert lazy is not None and lazy.data == text.encode() and lazy.text == text
    assert lazy == decode_snapshot("r1", row) == Snapshot(3, 7, STATE)
    assert lazy.state is lazy.state  # decoded once
    assert repr(lazy) == repr(Snapshot(3, 7, STATE))


@pytest.mark.parametrize(("stored", "error"), [("{broken", "unreadable"), ("[1]", "not an object")])
def test_a_lazy_snapshot_that_does_not_decode_says_so_when_used(stored: str, error: str) -> None:
    lazy = decode_snapshot("r1", (3, 7, stored.encode(), None), lazy=True)
    assert lazy is not None
    with pytest.raises(StateCorruptionError, match=error):
        _ = lazy.state
    with pytest.raises(AttributeError, match="no attribute 'other'"):
        _ = lazy.other  # type: ignore[attr-defined]


def test_a_lazy_snapshot_checks_its_checksum_at_once() -> None:
    text = dumps(STATE)
    with pytest.raises(StateCorruptionError, match="checksum"):
        decode_snapshot("r1", (3, 7, text.encode(), checksum(text) ^ 1), lazy=True)


def test_sqlite_reads_a_resumes_snapshot_lazily(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    store.create_run(new_run())
    store.commit("r1", [], snapshot=Snapshot(1, 0, STATE))
    _, lazy = store.get_run_with_snapshot("r1")
    eager = store.latest_snapshot("r1")
    assert lazy is not None and eager is not None
    assert lazy.data == dumps(STATE).encode() and eager.data is None
    assert lazy == eager == Snapshot(1, 0, STATE)
    store.close()


def test_a_snapshots_state_is_a_property_that_decodes_once() -> None:
    # the lazy state is read through an explicit property, not a __getattr__ fallback
    assert isinstance(Snapshot.__dict__["state"], property)
    assert "__getattr__" not in Snapshot.__dict__
    text = dumps(STATE)
    lazy = Snapshot.from_json(3, 7, text.encode(), text)
    assert lazy.state == STATE and lazy.state is lazy.state
    assert Snapshot(3, 7, STATE).state is STATE


def test_a_snapshot_does_not_change_and_copies_as_its_state() -> None:
    text = dumps(STATE)
    lazy = Snapshot.from_json(3, 7, text.encode(), text)
    with pytest.raises(AttributeError, match="does not change"):
        lazy.step = 4  # type: ignore[misc]
    assert copy.copy(lazy) == pickle.loads(pickle.dumps(lazy)) == Snapshot(3, 7, STATE)
    assert Snapshot(3, 7, STATE) != Snapshot(3, 8, STATE)
