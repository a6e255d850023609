"""The routes the web UI draws from: an agent's phase graph, a run's steps, and the state
after any step with what the step changed."""

from __future__ import annotations

from tests.server.helpers import LiveServer
from tests.server.test_api import follow, start


def test_graph_of_an_agent_without_phases_and_of_an_unknown_one(server: LiveServer) -> None:
    with server.client() as client:
        router = client.get("/agents/router/graph").json()
        assert router["agent"] == "router" and router["phases"] == []
        missing = client.get("/agents/no-such-agent/graph")
        assert missing.status_code == 404 and "test.paced" in missing.json()["detail"]


def test_state_after_a_step_and_its_changes(server: LiveServer) -> None:
    with server.client() as client:
        run = start(client, "test.paced", steps=3, per_step=2)
        frames = [e.json() for e in follow(client, run["id"]) if e.event != "end"]
        steps = client.get(f"/runs/{run['id']}/steps").json()["steps"]
        assert [s["step"] for s in steps] == [0, 1, 2, 3]
        assert [s["seq"] for s in steps] == sorted(s["seq"] for s in steps)
        tick = next(f for f in frames if f.get("payload", {}).get("step") == 1)
        view = client.get(f"/runs/{run['id']}/state", params={"seq": tick["seq"]}).json()
        assert view["step"] == 2 and view["first_seq"] <= tick["seq"] <= view["seq"]
        assert view["state"]["agent"]["done"] == 2
        assert {"op": "set", "path": ["agent", "done"], "before": 1, "after": 2} in view["changes"]
        first = client.get(f"/runs/{run['id']}/state", params={"seq": 1}).json()
        assert first["step"] == 0
        assert [c["path"] for c in first["changes"]] == [["agent"], ["runtime"]]
        last = client.get(f"/runs/{run['id']}").json()["last_seq"]
        past = client.get(f"/runs/{run['id']}/state", params={"seq": last + 1})
        assert past.status_code == 422 and f"last frame (seq {last})" in past.json()["detail"]
        assert client.get("/runs/nope/state", params={"seq": 1}).status_code == 404
