"""Every route of the HTTP API through a real server on 127.0.0.1."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from kforge.agents.results import sources_text
from kforge.rag.types import Citation
from tests.server.agents import GATES
from tests.server.helpers import Event, LiveServer, iter_events


def follow(client: httpx.Client, run_id: str, *, until: str = "end", after: int = 0) -> list[Event]:
    """Frame events of the run's stream (its ``status`` events left out) up to and including
    the first of type ``until``."""
    seen: list[Event] = []
    with client.stream("GET", f"/runs/{run_id}/stream", params={"after_seq": after}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for event in iter_events(response):
            if event.event == "status" and until != "status":
                continue
            seen.append(event)
            if event.event in (until, "end"):
                break
    return seen


def start(client: httpx.Client, agent: str, **args: Any) -> dict[str, Any]:
    response = client.post("/runs", json={"agent": agent, "args": args})
    assert response.status_code == 201, response.text
    assert response.headers["location"] == f"/runs/{response.json()['id']}"
    return dict(response.json())


def test_health_agents_models_and_openapi(server: LiveServer) -> None:
    with server.client() as client:
        assert client.get("/health").json()["status"] == "ok"
        assert client.get("/agents").json() == {"agents": ["router", "test.paced"]}
        models = client.get("/models").json()
        assert models["server_model"] == "test"
        assert all(m["status"] == "not checked" for m in models["models"])
        spec = client.get("/openapi.json").json()
        for path in ("/runs", "/runs/{run_id}/stream", "/runs/{run_id}/answer", "/agent/tree"):
            assert path in spec["paths"]
        assert client.get("/").headers["location"] == "/ui/"  # not followed


def test_a_router_run_streams_to_its_answer(server: LiveServer) -> None:
    with server.client() as client:
        run = start(
            client, "router", question="What is retrieval-augmented generation?", corpus="samples"
        )
        assert run["status"] in ("pending", "running")
        events = follow(client, run["id"])
        frames = [e for e in events if e.id is not None]
        assert [int(e.id or 0) for e in frames] == list(range(1, len(frames) + 1))
        assert all(e.json()["type"] == e.event for e in frames)
        end = events[-1]
        assert end.event == "end" and end.json()["status"] == "completed"
        done = client.get(f"/runs/{run['id']}").json()
        assert done["status"] == "completed"
        assert "retriev" in done["result"]["answer"].lower()
        assert done["last_seq"] == len(frames)


CITATION_FIELDS = {
    "number",
    "chunk_id",
    "file",
    "title",
    "heading",
    "page",
    "start",
    "end",
    "quote",
}


def test_a_run_shows_its_text_and_the_sources_kforge_ask_prints(server: LiveServer) -> None:
    with server.client() as client:
        run = start(
            client, "router", question="What is BM25?", corpus="samples", answer="extractive"
        )
        follow(client, run["id"])
        done = client.get(f"/runs/{run['id']}").json()
        result = done["result"]
        # the stored result keeps the citation fields it always had
        assert result["citations"] and all(set(c) == CITATION_FIELDS for c in result["citations"])
        # beside it, what a person reads: the answer and its Sources, rendered as the CLI does
        assert done["text"] == result["answer"]
        labels = [Citation.from_dict(c).label for c in result["citations"]]
        assert done["sources"] == labels
        assert sources_text(Citation.from_dict(c) for c in result["citations"]) == (
            "Sources:\n" + "\n".join(f"  {label}" for label in labels)
        )
        listed = client.get("/runs", params={"agent": "router"}).json()["runs"]
        assert next(r for r in listed if r["id"] == run["id"])["sources"] == labels


def test_frames_are_read_in_pages_after_a_seq(server: LiveServer) -> None:
    with server.client() as client:
        run = start(client, "test.paced", steps=3, per_step=3)
        follow(client, run["id"])
        page = client.get(f"/runs/{run['id']}/frames", params={"after_seq": 2, "limit": 4}).json()
        assert [f["seq"] for f in page["frames"]] == [3, 4, 5, 6]
        assert page["next_after_seq"] == 6
        rest = client.get(f"/runs/{run['id']}/frames", params={"after_seq": 6}).json()
        assert rest["frames"][-1]["seq"] == rest["last_seq"]
        assert rest["next_after_seq"] is None


def test_runs_are_listed_with_filters_and_pages(server: LiveServer) -> None:
    with server.client() as client:
        ids = [start(client, "test.paced", steps=1)["id"] for _ in range(3)]
        for run_id in ids:
            follow(client, run_id)
        start(client, "test.paced", steps=2, ask_at=1)  # will wait for an answer
        first = client.get("/runs", params={"agent": "test.paced", "limit": 2}).json()
        assert len(first["runs"]) == 2 and first["next_offset"] == 2
        second = client.get("/runs", params={"agent": "test.paced", "limit": 2, "offset": 2}).json()
        assert second["next_offset"] is None
        listed = [r["id"] for r in first["runs"] + second["runs"]]
        assert len(set(listed)) == 4 and set(ids) <= set(listed)
        completed = client.get("/runs", params={"status": "completed"}).json()["runs"]
        assert {r["id"] for r in completed} == set(ids)
        bad = client.get("/runs", params={"status": "sleeping"})
        assert bad.status_code == 422 and "status" in bad.json()["detail"]


def test_a_run_answered_through_the_api_resumes(server: LiveServer) -> None:
    with server.client() as client:
        run = start(client, "test.paced", steps=2, ask_at=1)
        events = follow(client, run["id"], until="interaction.requested")
        asked = events[-1].json()
        assert asked["options"] == ["approve", "reject"]
        waiting = client.get(f"/runs/{run['id']}").json()
        assert waiting["status"] == "awaiting_user"
        assert waiting["pending_interaction"]["interaction_id"] == asked["interaction_id"]

        wrong = client.post(
            f"/runs/{run['id']}/answer", json={"action": "modify", "modifications": {"x": 1}}
        )
        assert wrong.status_code == 422
        assert "approve, reject" in wrong.json()["detail"]
        stale = client.post(
            f"/runs/{run['id']}/answer", json={"action": "approve", "interaction_id": "nope"}
        )
        assert stale.status_code == 409 and stale.json()["code"] == "stale-interaction"
        assert client.get(f"/runs/{run['id']}").json()["last_seq"] == waiting["last_seq"]

        answered = client.post(
            f"/runs/{run['id']}/answer",
            json={"action": "approve", "interaction_id": asked["interaction_id"]},
        )
        assert answered.status_code == 200, answered.text
        rest = follow(client, run["id"], after=waiting["last_seq"])
        assert rest[0].event == "interaction.answered"
        assert rest[-1].json()["status"] == "completed"
        done = client.get(f"/runs/{run['id']}").json()
        assert done["result"]["answer"] == {"action": "approve"}
        again = client.post(f"/runs/{run['id']}/answer", json={"action": "approve"})
        assert again.status_code == 409 and "not waiting" in again.json()["detail"]


def test_fork_resume_cancel_and_delete(server: LiveServer) -> None:
    with server.client() as client:
        run = start(client, "test.paced", steps=2, per_step=2)
        follow(client, run["id"])
        forked = client.post(f"/runs/{run['id']}/fork", json={"at_seq": 3})
        assert forked.status_code == 201, forked.text
        fork = forked.json()
        assert fork["forked_from"] == run["id"] and fork["status"] == "paused"
        too_far = client.post(f"/runs/{run['id']}/fork", json={"at_seq": 10_000})
        assert too_far.status_code == 422
        assert client.post(f"/runs/{fork['id']}/resume").status_code == 200
        assert follow(client, fork["id"])[-1].json()["status"] == "completed"

        waiting = start(client, "test.paced", steps=2, ask_at=1)
        follow(client, waiting["id"], until="interaction.requested")
        cancelled = client.post(f"/runs/{waiting['id']}/cancel", json={"reason": "enough"})
        assert cancelled.json()["status"] == "cancelled"
        again = client.post(f"/runs/{waiting['id']}/cancel")
        assert again.status_code == 409 and again.json()["code"] == "invalid-run-state"

        deleted = client.delete(f"/runs/{run['id']}")
        assert deleted.json()["status"] == "deleted"
        assert client.delete(f"/runs/{run['id']}").status_code == 409


def test_agent_tree_routes_over_runs_and_child_runs(server: LiveServer) -> None:
    with server.client() as client:
        parent = start(client, "test.paced", steps=2, ask_at=1)
        follow(client, parent["id"], until="interaction.requested")
        child = client.post(
            "/runs", json={"agent": "test.paced", "args": {"steps": 2, "ask_at": 1}}
        ).json()
        # a child run as a tree agent's fork makes it: same runtime call, parent_id set
        runtime = server.app.state.kforge.runtime
        grandchild_id = server.call(
            runtime.start("test.paced", {"steps": 2, "ask_at": 1}, parent_id=parent["id"])
        )
        follow(client, grandchild_id, until="interaction.requested")
        tree = client.get("/agent/tree", params={"root": parent["id"]}).json()
        assert tree["roots"] == [parent["id"]]
        assert tree["agents"][parent["id"]]["subagents"] == [grandchild_id]
        assert tree["agents"][grandchild_id]["parentId"] == parent["id"]
        whole = client.get("/agent/tree").json()
        assert {parent["id"], child["id"]} <= set(whole["roots"])

        one = client.get(f"/agent/{grandchild_id}").json()
        assert one["status"] == "awaiting_user" and one["frames"][0]["seq"] == 1

        comment = client.post(
            f"/agent/{grandchild_id}/intervene",
            json={"action": "comment", "content": "look at costs"},
        )
        assert comment.status_code == 200 and comment.json()["success"] is True
        frames = client.get(f"/runs/{grandchild_id}/frames").json()["frames"]
        assert frames[-1]["type"] == "intervention" and frames[-1]["content"] == "look at costs"

        deleted = client.post(f"/agent/{parent['id']}/intervene", json={"action": "delete"})
        assert deleted.json()["agent"]["status"] == "deleted"
        tree = client.get("/agent/tree", params={"root": parent["id"]}).json()
        assert {a["status"] for a in tree["agents"].values()} == {"deleted"}
        bad = client.post(f"/agent/{parent['id']}/intervene", json={"action": "explode"})
        assert bad.status_code == 422 and "action" in bad.json()["detail"]


def test_corpora_are_listed_searched_and_ingested_only_from_allowed_folders(
    server: LiveServer, tmp_path: Path
) -> None:
    with server.client() as client:
        names = [c["name"] for c in client.get("/corpora").json()["corpora"]]
        assert names == ["samples"]
        hits = client.post("/corpora/samples/search", json={"query": "retrieval", "k": 2}).json()
        assert len(hits["hits"]) == 2 and hits["hits"][0]["rank"] == 1
        missing = client.post("/corpora/nope/search", json={"query": "x"})
        assert missing.status_code == 404 and "GET /corpora" in missing.json()["detail"]

        allowed = tmp_path / "allowed"
        done = client.post("/corpora/notes/ingest", json={"path": str(allowed)})
        assert done.status_code == 200, done.text
        assert done.json()["report"]["added"] == ["note.md"]
        hit = client.post("/corpora/notes/search", json={"query": "server-sent events"}).json()
        assert hit["hits"][0]["chunk"]["file"] == "note.md"

        outside = client.post("/corpora/notes/ingest", json={"path": str(tmp_path)})
        assert outside.status_code == 403 and outside.json()["code"] == "folder-not-allowed"
        sneaky = client.post("/corpora/notes/ingest", json={"path": str(allowed / "..")})
        assert sneaky.status_code == 403
        bad_name = client.post("/corpora/..%2Fx/ingest", json={"path": str(allowed)})
        assert bad_name.status_code in (404, 422)


def test_cancelling_an_executing_run_stops_it(server: LiveServer) -> None:
    gate = GATES["cancel"] = threading.Semaphore(0)
    with server.client() as client:
        run = start(client, "test.paced", steps=3, gate="cancel")
        with client.stream("GET", f"/runs/{run['id']}/stream") as response:
            for event in iter_events(response):
                if event.event == "status.changed" and event.json()["to_status"] == "running":
                    break
        cancelled = client.post(f"/runs/{run['id']}/cancel", json={"reason": "too slow"})
        gate.release(3)  # frees the worker thread the step was waiting in
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["status"] == "cancelled"
        events = follow(client, run["id"])
        assert events[-1].json()["status"] == "cancelled"
        assert not [e for e in events if e.event == "data.tick"]
