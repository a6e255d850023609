"""A throwaway PostgreSQL server for the tests, started with ``scripts/postgres``.

One server per test session; each test that asks for ``postgres_url`` gets a new empty
database on it, dropped afterwards. ``KFORGE_TEST_POSTGRES`` (a URL of a database on a server the
tests may create databases on) replaces the throwaway server. Tests skip, saying why, only where
PostgreSQL is missing and cannot be installed, or the ``postgres`` extra is not installed.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from kforge.store import MemoryStore, SQLiteStore
from kforge.store.combined import Store

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "postgres"
NOT_INSTALLABLE = 3
"""The script's exit code for "PostgreSQL is missing and cannot be installed here"."""


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a database on a running server the tests may create databases on."""
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    given = os.environ.get("KFORGE_TEST_POSTGRES")
    if given:
        yield given
        return
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", "-c", "fsync=off", "-c", "max_connections=300"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if started.returncode == NOT_INSTALLABLE:
        pytest.skip(f"PostgreSQL unavailable: {started.stderr.strip()}")
    if started.returncode != 0:
        raise RuntimeError(f"scripts/postgres start failed:\n{started.stderr}")
    env = dict(
        line.removeprefix("export ").split("=", 1)
        for line in started.stdout.splitlines()
        if line.startswith("export ")
    )
    try:
        yield env["KFORGE_DB"]
    finally:
        subprocess.run(
            ["bash", str(SCRIPT), "stop", env["KFORGE_PG_DIR"]], check=False, timeout=120
        )


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A new, empty database for one test."""
    import psycopg

    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield with_database(postgres_server, name)
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def migrate_to(conn: Any, version: int) -> None:
    """Bring an empty database (``conn`` in autocommit mode) to schema ``version`` as the kforge
    of that version left it, to test what a later one makes of it."""
    from kforge.store.postgres_schema import MIGRATIONS

    conn.execute("CREATE TABLE kforge_schema_version (version integer NOT NULL)")
    for number, statements in MIGRATIONS[:version]:
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO kforge_schema_version VALUES (%s)", (number,))


STORE_KINDS = ["memory", "sqlite", "postgres"]


def store_of_kind(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """A new empty store of ``kind`` (one of ``STORE_KINDS``); PostgreSQL's on this server."""
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "k.db")
    from kforge.store.postgres import PostgresStore

    return PostgresStore(request.getfixturevalue("postgres_url"))
