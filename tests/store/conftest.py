"""``any_store``: a new, empty store of each kind (memory, SQLite, PostgreSQL); ``store`` is the
same for the tests here that do not name their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kforge.store import Store
from tests.postgres import STORE_KINDS, store_of_kind


@pytest.fixture(params=STORE_KINDS)
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = store_of_kind(request.param, request, tmp_path)
    yield s
    s.close()


@pytest.fixture
def store(any_store: Store) -> Store:
    return any_store
