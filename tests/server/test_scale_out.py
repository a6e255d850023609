"""The server with the dbos executor on PostgreSQL: runs it starts execute in a ``kforge worker``
process, and its SSE stream carries every frame that worker commits, in order, through a
question answered over HTTP, to the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.runtime import Runtime
from tests.server.helpers import LiveServer, iter_events

pytest.importorskip("dbos", reason="the dbos extra is not installed")

from tests.runtime.test_workers import start_worker, stop_workers


def test_a_stream_follows_a_run_executed_by_a_worker(postgres_url: str, tmp_path: Path) -> None:
    import tests.runtime.effect_agent  # noqa: F401  (registers test.effects in this process)

    effects = tmp_path / "effects.txt"
    effects.touch()
    worker, _ = start_worker(postgres_url, effects, concurrency=2)
    runtime = Runtime(postgres_url, model="test", executor="dbos")
    try:
        with LiveServer(runtime) as server, server.client() as client:
            run = client.post(
                "/runs", json={"agent": "test.effects", "args": {"steps": 3, "ask_at": 2}}
            ).json()
            seen = []
            with client.stream("GET", f"/runs/{run['id']}/stream") as response:
                events = iter_events(response)
                for event in events:
                    seen.append(event)
                    if event.event == "interaction.requested":
                        break
                answered = client.post(f"/runs/{run['id']}/answer", json={"action": "approve"})
                assert answered.status_code == 200, answered.text
                seen.extend(events)
            final = client.get(f"/runs/{run['id']}").json()
    finally:
        stop_workers([worker])
    assert seen[-1].event == "end" and seen[-1].json()["status"] == "completed"
    ids = [int(e.id) for e in seen if e.id is not None]
    assert ids == list(range(1, final["last_seq"] + 1))  # every frame, once, in order
    names = [e.event for e in seen]
    assert names.count("tool.result") == 3 and "interaction.answered" in names
    assert effects.read_text().splitlines() == [f"{run['id']} {step}" for step in (1, 2, 3)]
