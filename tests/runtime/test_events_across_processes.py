"""Live events across processes: a subscriber here sees every frame of a run that another
process executes on the same PostgreSQL database, in order, as that process commits them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kforge.frames import Frame
from kforge.runtime import Runtime
from kforge.store import RunStatus
from tests.engine.sample_agents import make_registry

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

WORKER = Path(__file__).with_name("worker.py")


async def test_a_subscriber_sees_every_frame_of_a_run_executed_in_another_process(
    postgres_url: str,
) -> None:
    rt = Runtime(postgres_url, model="test", registry=make_registry())
    assert rt.bus.crosses_processes
    replies = [str(i) for i in range(1, 7)]
    proc = subprocess.Popen(
        [
            sys.executable,
            str(WORKER),
            postgres_url,
            "start",
            "test.counter",
            json.dumps({"target": 6}),
            json.dumps(replies),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "WORKER_GATE": "1"},  # the first model call waits for a line
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        run_id = (await asyncio.to_thread(proc.stdout.readline)).strip()
        seen: list[Frame] = []
        stream = rt.subscribe(run_id, follow=True)
        seen.append(await anext(stream))  # subscribed: now let the other process run
        proc.stdin.write("go\n")
        proc.stdin.flush()
        async with asyncio.timeout(60):
            async for frame in stream:
                seen.append(frame)
        _, err = await asyncio.to_thread(proc.communicate, timeout=60)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
    run = rt.get_run(run_id)
    assert run.status == RunStatus.COMPLETED and run.result == {"values": [1, 2, 3, 4, 5, 6]}
    stored = rt.frames(run_id)
    assert [(f.seq, f.id) for f in seen] == [(f.seq, f.id) for f in stored]
    assert [f.seq for f in seen] == list(range(1, run.last_seq + 1))
    await rt.aclose()


async def test_a_commit_by_another_writer_wakes_only_that_runs_subscribers(
    postgres_url: str,
) -> None:
    from kforge.frames import AgentThinking, utc_now
    from kforge.store import RunRecord
    from kforge.store.postgres import PostgresStore

    here, elsewhere = PostgresStore(postgres_url), PostgresStore(postgres_url)
    now = utc_now()
    for run_id in ("watched", "other"):
        elsewhere.create_run(RunRecord(run_id, "t", RunStatus.PENDING, now, now, {}))
    rt = Runtime(here, model="test", registry=make_registry())
    watched, other = rt.bus.subscribe("watched"), rt.bus.subscribe("other")
    # Only the listener can put anything in these queues: nothing here commits or publishes.
    elsewhere.commit("watched", [AgentThinking(run_id="watched", seq=1, message="hi")])
    async with asyncio.timeout(30):
        assert await watched.get() is None
    assert other.empty()
    # Frames published here are not announced to this process's subscribers again.
    rt.bus.publish("other", [AgentThinking(run_id="other", seq=1, message="mine")])
    rt.store.commit("other", [AgentThinking(run_id="other", seq=1, message="mine")])
    elsewhere.commit("watched", [AgentThinking(run_id="watched", seq=2, message="again")])
    async with asyncio.timeout(30):
        assert await watched.get() is None
    assert [type(other.get_nowait()).__name__] == ["AgentThinking"] and other.empty()
    elsewhere.close()
    await rt.aclose()


async def test_a_listener_whose_connection_is_cut_reconnects_and_wakes_everyone(
    postgres_url: str,
) -> None:
    import psycopg

    from kforge.frames import AgentThinking, utc_now
    from kforge.store import RunRecord
    from kforge.store.postgres import PostgresStore

    elsewhere = PostgresStore(postgres_url)
    now = utc_now()
    elsewhere.create_run(RunRecord("watched", "t", RunStatus.PENDING, now, now, {}))
    rt = Runtime(postgres_url, model="test", registry=make_registry())
    watched = rt.bus.subscribe("watched")
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        cut = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
        ).fetchall()
    assert cut == [(True,)]
    # Back again, it wakes every subscriber (commits may have been missed meanwhile) ...
    async with asyncio.timeout(30):
        assert await watched.get() is None
    # ... and hears later commits as before.
    elsewhere.commit("watched", [AgentThinking(run_id="watched", seq=1, message="hi")])
    async with asyncio.timeout(30):
        assert await watched.get() is None
    elsewhere.close()
    await rt.aclose()


async def test_following_a_run_executed_here_opens_no_listening_connection(
    postgres_url: str,
) -> None:
    """Its frames are published here; listening starts only for a run another process may
    execute."""
    import psycopg

    from kforge.frames import utc_now
    from kforge.llm.testing.scripted import ScriptedModel
    from kforge.llm.types import ModelResponse
    from kforge.store import RunRecord

    def listeners() -> int:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
            ).fetchone()
        return int(row[0]) if row else 0

    model = ScriptedModel([ModelResponse(text=str(n)) for n in (1, 2)])
    rt = Runtime(postgres_url, model=model, registry=make_registry())
    run_id = await rt.start("test.counter", {"target": 2})
    async with asyncio.timeout(60):
        seen = [frame async for frame in rt.subscribe(run_id)]
    assert rt.get_run(run_id).status == RunStatus.COMPLETED
    assert [f.seq for f in seen] == list(range(1, rt.get_run(run_id).last_seq + 1))
    assert listeners() == 0
    now = utc_now()
    rt.store.create_run(RunRecord("elsewhere", "t", RunStatus.PENDING, now, now, {}))
    rt.bus.subscribe("elsewhere")
    assert listeners() == 1
    await rt.aclose()
