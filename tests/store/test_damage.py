"""Damaged records: a snapshot of any kind of damage falls back to the step deltas, checksums
catch flips that stay valid JSON, a run that cannot be rebuilt fails alone with a clear message,
and the command line answers a damaged database with one line and how to recover."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import kforge
from kforge.errors import StateCorruptionError, StoreError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import RunRecord, RunStatus, SQLiteStore
from tests.engine.sample_agents import make_registry

SRC = Path(kforge.__file__).resolve().parents[1]


async def waiting_draft(db: Path, topic: str = "t") -> RunRecord:
    rt = Runtime(SQLiteStore(db), model=ScriptedModel([{"items": ["a"]}]), registry=make_registry())
    run = await rt.run("test.draft", {"topic": topic})
    assert run.status == RunStatus.AWAITING_USER
    return run


def tamper(db: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


async def approve(db: Path, run_id: str) -> RunRecord:
    rt = Runtime(
        SQLiteStore(db), model=ScriptedModel([{"verdict": "ok"}]), registry=make_registry()
    )
    await rt.resume(run_id, "approve")
    return await rt.wait(run_id)


def kforge_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "kforge", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def flip_a_byte(db: Path, run_id: str, column: str, table: str, where: str = "") -> None:
    conn = sqlite3.connect(db)
    (blob,) = conn.execute(
        f"SELECT CAST({column} AS BLOB) FROM {table} WHERE run_id = ? {where}", (run_id,)
    ).fetchone()
    damaged = bytearray(blob)
    damaged[len(damaged) // 2] = 0xFF  # never valid in UTF-8
    conn.execute(
        f"UPDATE {table} SET {column} = CAST(? AS TEXT) WHERE run_id = ? {where}",
        (bytes(damaged), run_id),
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "damage",
    ["flipped byte", "empty object", "valid JSON, wrong value", "not JSON"],
)
async def test_a_damaged_snapshot_is_rebuilt_from_the_deltas(tmp_path: Path, damage: str) -> None:
    db = tmp_path / "k.db"
    run = await waiting_draft(db)
    if damage == "flipped byte":
        flip_a_byte(db, run.id, "state", "snapshots")
    elif damage == "empty object":
        tamper(db, "UPDATE snapshots SET state = '{}', checksum = NULL WHERE run_id = ?", run.id)
    elif damage == "valid JSON, wrong value":  # only the checksum can tell
        tamper(
            db,
            "UPDATE snapshots SET state = replace(state, '\"a\"', '\"z\"') WHERE run_id = ?",
            run.id,
        )
    else:
        tamper(db, "UPDATE snapshots SET state = '{broken' WHERE run_id = ?", run.id)
    store = SQLiteStore(db)
    if damage != "empty object":
        with pytest.raises(StateCorruptionError):
            store.latest_snapshot(run.id)
    store.close()
    done = await approve(db, run.id)
    assert done.status == RunStatus.COMPLETED, done.error
    assert done.result is not None and done.result.get("items") == ["a"]


async def test_a_delta_that_fails_its_checksum_fails_that_run_alone(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    broken = await waiting_draft(db, "t")
    healthy = await waiting_draft(db, "u")
    tamper(db, "UPDATE snapshots SET state = '{}', checksum = NULL WHERE run_id = ?", broken.id)
    tamper(
        db,
        "UPDATE steps SET delta = replace(delta, '\"a\"', '\"z\"') WHERE run_id = ? AND step = 1",
        broken.id,
    )
    store = SQLiteStore(db)
    with pytest.raises(StateCorruptionError, match="does not match its checksum"):
        store.read_steps(broken.id)
    store.close()
    run = await approve(db, broken.id)
    assert run.status == RunStatus.FAILED
    assert run.error is not None and "state corruption" in run.error and "fork" in run.error
    assert (await approve(db, healthy.id)).status == RunStatus.COMPLETED


async def test_a_damaged_last_frame_fails_the_run_and_the_cli_says_how_to_recover(
    tmp_path: Path,
) -> None:
    db = tmp_path / "k.db"
    run = await waiting_draft(db)
    last = run.last_seq - 1  # the question, which the resumed step replays
    flip_a_byte(db, run.id, "data", "frames", f"AND seq = {last}")
    done = await approve(db, run.id)
    assert done.status == RunStatus.FAILED
    assert done.error is not None and f"frame seq {last} is damaged" in done.error

    explain = kforge_cli("--db", str(db), "runs", "explain", run.id)
    assert explain.returncode == 1
    assert "Traceback" not in explain.stderr and len(explain.stderr.strip().splitlines()) == 1
    assert f"kforge runs export {run.id}" in explain.stderr

    out = tmp_path / "frames.jsonl"
    export = kforge_cli("--db", str(db), "runs", "export", run.id, "-o", str(out))
    assert export.returncode == 0, export.stderr
    assert f"left out damaged frames {last}" in export.stderr
    assert len(out.read_text().splitlines()) == done.last_seq - 1


def test_a_database_with_damaged_pages_gets_one_line_not_a_traceback(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    store = SQLiteStore(db)
    from kforge.frames import AgentThinking, utc_now

    for i in range(20):
        now = utc_now()
        store.create_run(
            RunRecord(
                id=f"run{i}",
                agent_type="t",
                status=RunStatus.PENDING,
                created_at=now,
                updated_at=now,
                input={"args": {"pad": "x" * 500}},
            ),
            [AgentThinking(run_id=f"run{i}", seq=1, message="y" * 800)],
        )
    store.close()
    size = db.stat().st_size
    page = 4096
    with open(db, "r+b") as fh:  # every page but the first (the schema) overwritten
        fh.seek(page)
        fh.write(b"\xa5" * (size - page))
    for args in (["runs", "list"], ["runs", "explain", "run3"], ["runs", "export", "run3"]):
        result = kforge_cli("--db", str(db), *args)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert ".recover" in result.stderr
    with pytest.raises(StoreError, match="damaged"):
        SQLiteStore(db).list_runs()


async def test_a_damaged_run_row_is_a_store_error_naming_the_run(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    run = await waiting_draft(db)
    tamper(db, "UPDATE runs SET input = '{cut' WHERE id = ?", run.id)
    store = SQLiteStore(db)
    with pytest.raises(StateCorruptionError, match=f"run '{run.id}': its record is damaged"):
        store.get_run(run.id)
    tamper(db, "UPDATE runs SET input = CAST(X'7B22FF' AS TEXT) WHERE id = ?", run.id)
    with pytest.raises(StoreError, match="damaged"):
        store.list_runs()
    store.close()
    result = kforge_cli("--db", str(db), "runs", "list")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


async def test_undecodable_text_is_named_by_its_column_without_quoting_its_bytes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "k.db"
    run = await waiting_draft(db)
    garbled = b'{"report": "# Research report\\n\\n## Question tree\xff\xfe"}'
    tamper(db, "UPDATE runs SET result = CAST(? AS TEXT) WHERE id = ?", garbled, run.id)
    result = kforge_cli("--db", str(db), "runs", "list")
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == (
        f"kforge: error: database {db} is damaged (a value in column 'result' is not readable "
        f"text); copy out what is readable with the sqlite3 tool (`sqlite3 {db} .recover > "
        "recovered.sql`), then restore a backup or start a new database with --db"
    )


def test_a_damaged_stored_document_says_how_to_rebuild_it(tmp_path: Path) -> None:
    db = tmp_path / "docs.db"
    store = SQLiteStore(db)
    store.put_docs("rag/corpora", {"docs": {"name": "docs"}, "notes": {"name": "notes"}})
    store.close()
    tamper(db, "UPDATE docs SET value = ? WHERE key = ?", '{"name": "no', "notes")
    store = SQLiteStore(db)
    assert store.get_docs("rag/corpora", ["docs"]) == {"docs": {"name": "docs"}}
    with pytest.raises(StateCorruptionError, match=r"'rag/corpora' is damaged.*ingest again"):
        store.get_docs("rag/corpora")
    store.close()
