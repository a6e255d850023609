"""SSE streams of live runs: reconnecting with Last-Event-ID loses and repeats nothing, and a
client that stops reading never holds a run back."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import httpx

from tests.server.agents import GATES
from tests.server.helpers import LiveServer, iter_events


def test_reconnecting_at_20_random_points_of_a_live_run_gets_every_frame_once(
    server: LiveServer,
) -> None:
    steps, per_step = 60, 3
    gate = GATES["reconnect"] = threading.Semaphore(1)
    rng = random.Random(16)
    with server.client() as client:
        run = client.post(
            "/runs",
            json={
                "agent": "test.paced",
                "args": {"steps": steps, "per_step": per_step, "gate": "reconnect"},
            },
        ).json()
        total = 1 + steps * per_step + 2  # created, ticks, running/completed status changes
        cuts = sorted(rng.sample(range(2, total - 10), 20))
        seqs: list[int] = []
        ended = False
        connections = 0
        while not ended:
            headers = {"Last-Event-ID": str(seqs[-1])} if seqs else {}
            connections += 1
            with client.stream("GET", f"/runs/{run['id']}/stream", headers=headers) as response:
                assert response.status_code == 200
                for event in iter_events(response):
                    if event.event == "end":
                        ended = True
                        break
                    if event.event == "status":
                        continue
                    assert event.id is not None
                    seqs.append(int(event.id))
                    data = event.json()
                    if data["type"] == "data.tick" and data["payload"]["i"] == per_step - 1:
                        gate.release()  # the next step may run
                    if cuts and len(seqs) >= cuts[0]:
                        cuts.pop(0)
                        gate.release()  # and one more runs while nobody listens
                        break
        gate.release(steps)  # nothing left waiting on the gate
        assert connections == 21
        assert seqs == list(range(1, len(seqs) + 1))
        final = client.get(f"/runs/{run['id']}").json()
        assert final["status"] == "completed" and final["last_seq"] == seqs[-1]


def test_a_client_that_stops_reading_does_not_hold_the_run_back(server: LiveServer) -> None:
    with server.client() as client, httpx.Client(base_url=server.url, timeout=60) as stalled:
        gate = GATES["stall"] = threading.Semaphore(0)
        run = client.post(
            "/runs",
            json={
                "agent": "test.paced",
                "args": {"steps": 40, "per_step": 50, "pad": 2000, "gate": "stall"},
            },
        ).json()
        with stalled.stream("GET", f"/runs/{run['id']}/stream") as response:
            held = iter_events(response)  # kept: closing the iterator would close the stream
            assert next(held).id == "1"  # connected, then never reads again
            gate.release(40)
            with client.stream("GET", f"/runs/{run['id']}/stream") as reader:
                events = [e for e in iter_events(reader) if e.event != "status"]
            assert events[-1].event == "end" and events[-1].json()["status"] == "completed"
            assert [int(e.id or 0) for e in events[:-1]] == list(range(1, len(events)))
            assert not response.is_closed


def test_a_tree_stream_merges_a_run_and_its_children_and_resumes_each(
    server: LiveServer,
) -> None:
    gate = GATES["tree"] = threading.Semaphore(0)
    runtime = server.app.state.kforge.runtime

    def start(parent_id: str | None) -> str:
        args = {"steps": 4, "per_step": 2, "gate": "tree"}
        return server.call(runtime.start("test.paced", args, parent_id=parent_id))

    root = start(None)
    children = [start(root), start(root)]
    received: dict[str, list[int]] = {}
    cursor = ""
    ended = False
    cut_after = 5
    with server.client() as client:
        gate.release(2)
        while not ended:
            headers = {"Last-Event-ID": cursor} if cursor else {}
            with client.stream(
                "GET", "/agent/stream", params={"root": root}, headers=headers
            ) as response:
                assert response.status_code == 200
                for count, event in enumerate(iter_events(response), start=1):
                    if event.event == "end":
                        ended = True
                        assert event.json()["runs"] == 3
                        break
                    frame = event.json()
                    received.setdefault(frame["run_id"], []).append(frame["seq"])
                    cursor = event.id or ""
                    gate.release()
                    if count == cut_after:
                        break
            cut_after += 3
        gate.release(20)
        for run_id in received:
            assert client.get(f"/runs/{run_id}").json()["last_seq"] == received[run_id][-1]
    assert set(received) == {root, *children}
    for run_id, seqs in received.items():
        assert seqs == list(range(1, len(seqs) + 1)), run_id
    bad = httpx.get(
        f"{server.url}/agent/stream", params={"root": root}, headers={"Last-Event-ID": "nonsense"}
    )
    assert bad.status_code == 400


def test_model_text_streams_as_token_events_to_clients_that_ask(server: LiveServer) -> None:
    gate = GATES["say"] = threading.Semaphore(0)
    with server.client() as client:
        body = {"agent": "test.paced", "args": {"steps": 1, "say": "hello", "gate": "say"}}
        run = client.post("/runs", json=body).json()
        url = f"/runs/{run['id']}/stream"
        with client.stream("GET", url, params={"deltas": "true"}) as response:
            events = iter_events(response)
            assert next(events).id == "1"  # listening before the model is called
            gate.release()
            seen = list(events)
        tokens = [e for e in seen if e.event == "agent.token"]
        assert len(tokens) > 1 and all(e.id is None for e in tokens)
        assert tokens[0].json()["purpose"] == "say"
        call = next(i for i, e in enumerate(seen) if e.event == "model.call")
        assert seen.index(tokens[-1]) < call  # streamed while generated, before the record
        with client.stream("GET", url) as plain:  # without deltas=true: frames only
            assert not [e for e in iter_events(plain) if e.event == "agent.token"]


def test_frames_committed_by_another_process_reach_the_stream(
    server: LiveServer, tmp_path: Path
) -> None:
    import asyncio

    from kforge.runtime import AgentRegistry, Runtime
    from kforge.store.sqlite import SQLiteStore
    from tests.server.agents import PacedAgent

    with server.client() as client:
        run = client.post(
            "/runs", json={"agent": "test.paced", "args": {"steps": 2, "ask_at": 1}}
        ).json()
        with client.stream("GET", f"/runs/{run['id']}/stream") as response:
            events = iter_events(response)
            for event in events:
                if event.event == "interaction.requested":
                    break

            async def answer_elsewhere() -> None:
                # another runtime on the same database, as a worker or the CLI would be
                registry = AgentRegistry()
                registry.register(PacedAgent.agent_type, PacedAgent)
                other = Runtime(SQLiteStore(tmp_path / "k.db"), model="test", registry=registry)
                await other.resume(run["id"], "approve")
                await other.wait(run["id"])
                other.store.close()

            asyncio.run(answer_elsewhere())
            rest = list(events)
        names = [e.event for e in rest]
        assert names[0] == "status.changed"  # to awaiting_user, committed with the question
        assert "interaction.answered" in names and names.count("data.tick") == 2
        assert rest[-1].event == "end" and rest[-1].json()["status"] == "completed"


def test_a_status_event_follows_every_step_and_says_when_a_run_stops_at_a_limit(
    server: LiveServer,
) -> None:
    gate = GATES["progress"] = threading.Semaphore(0)
    body = {
        "agent": "test.paced",
        "args": {"steps": 5, "per_step": 1, "gate": "progress"},
        "limits": {"max_steps": 3},
    }
    statuses: list[dict[str, Any]] = []
    # a stream that went quiet without the event would fail the read, not hang the test
    with server.client(timeout=httpx.Timeout(60, read=10)) as client:
        run = client.post("/runs", json=body).json()
        released = 0
        try:
            with client.stream("GET", f"/runs/{run['id']}/stream") as response:
                for event in iter_events(response):
                    assert event.event != "end"  # a paused run's stream stays open
                    if event.event != "status":
                        continue
                    data = event.json()
                    statuses.append(data)
                    if data["status"] == "paused":
                        break
                    if data["steps"] == released:  # the step let through is committed
                        gate.release()
                        released += 1
        finally:
            gate.release(10)
    running = [s["steps"] for s in statuses if s["status"] == "running"]
    # one event per step: the third may say "running" before the limit pauses the run
    assert running == sorted(running) and {1, 2} <= set(running) <= {0, 1, 2, 3}
    last = statuses[-1]
    assert last["status"] == "paused" and last["steps"] == 3 and last["max_steps"] == 3
    assert last["pause_reason"].startswith("limit")
    assert all(s["run_id"] == run["id"] for s in statuses)
    seqs = [s["last_seq"] for s in statuses]
    assert seqs == sorted(seqs)


def test_a_status_event_says_when_a_run_waits_for_an_answer(server: LiveServer) -> None:
    with server.client(timeout=httpx.Timeout(60, read=10)) as client:
        run = client.post(
            "/runs", json={"agent": "test.paced", "args": {"steps": 2, "ask_at": 1}}
        ).json()
        with client.stream("GET", f"/runs/{run['id']}/stream") as response:
            events = iter_events(response)
            asked = next(e for e in events if e.event == "interaction.requested").json()
            waiting = next(e for e in events if e.event == "status").json()
            assert waiting["status"] == "awaiting_user"
            assert waiting["interaction_id"] == asked["interaction_id"]
            answer = {"action": "approve", "interaction_id": asked["interaction_id"]}
            assert client.post(f"/runs/{run['id']}/answer", json=answer).status_code == 200
            rest = list(events)
    after = [e.json()["status"] for e in rest if e.event == "status"]
    assert after[-1] == "completed" and "awaiting_user" not in after
    assert rest[-1].event == "end"
