"""The command line on a PostgreSQL database: ``--db URL`` or ``KFORGE_DB=URL``, in real
processes; a server that cannot be reached is named (without its password) and nothing runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def kforge(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "KFORGE_DB"}
    full.update(PYTHONPATH=str(SRC), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "kforge", *argv],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
    )


def test_ingest_ask_and_list_runs_on_postgres(postgres_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "a.md").write_text("# Note\n\nWorkers share one PostgreSQL database.\n")
    done = kforge("--db", postgres_url, "ingest", str(docs))
    assert done.returncode == 0, done.stderr
    asked = kforge(
        "--model",
        "test",
        "ask",
        "What do workers share?",
        "--corpus",
        "notes",
        env={"KFORGE_DB": postgres_url},
    )
    assert asked.returncode == 0, asked.stderr
    assert "Workers share one PostgreSQL database [1]." in asked.stdout
    listed = kforge("--db", postgres_url, "runs", "list")
    assert listed.returncode == 0, listed.stderr
    assert "router" in listed.stdout and "completed" in listed.stdout


def test_an_unreachable_database_is_a_clear_error() -> None:
    done = kforge("--db", "postgresql://kf:s3cret@127.0.0.1:1/kforge", "runs", "list")
    assert done.returncode == 1
    assert "cannot open PostgreSQL database postgresql://kf:***@127.0.0.1:1/kforge" in done.stderr
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr


def test_a_command_opens_postgres_without_preparing_for_many_resumes(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's or worker's pooled connections first run a step's statements (warming the
    server's caches for resumes); a command that runs once does not spend that time."""
    import argparse

    from kforge.cli._common import open_store as command_store
    from kforge.store import postgres_runs
    from kforge.store.open import open_store

    warmed: list[object] = []
    monkeypatch.setattr(postgres_runs, "_warm", warmed.append)
    # the connections warmed (on a new database, the warm-up queued with the schema check is
    # queued again once the schema is made)
    open_store(postgres_url).close()
    assert len({id(conn) for conn in warmed}) == 1
    command_store(argparse.Namespace(db=postgres_url)).close()
    assert len({id(conn) for conn in warmed}) == 1
