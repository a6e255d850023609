"""The agent tree routes over a real tree agent: read the tree, comment, modify and delete
agents over HTTP, and see a finished agent refuse an intervention."""

from __future__ import annotations

from pathlib import Path

import httpx

from kforge.agents.tree import TreeAgent
from kforge.runtime import AgentRegistry, Runtime
from kforge.store.sqlite import SQLiteStore
from tests.agents.tree_model import TreeScript
from tests.server.helpers import LiveServer, iter_events
from tests.server.test_api import follow, start

PARTY = "Plan my birthday party"
FOOD = "What food should we serve?"


def tree_runtime(tmp_path: Path) -> Runtime:
    """A runtime whose tree agent asks a clarifying question first, then has one subagent."""
    registry = AgentRegistry()
    registry.register(TreeAgent.agent_type, TreeAgent)
    script = TreeScript(ambiguous=(PARTY,), subquestions={PARTY: [FOOD]})
    return Runtime(SQLiteStore(tmp_path / "k.db"), model=script.model(), registry=registry)


def test_interventions_over_http_on_a_waiting_tree(tmp_path: Path) -> None:
    with LiveServer(tree_runtime(tmp_path)) as server, server.client() as client:
        root = start(client, "tree", prompt=PARTY)["id"]
        follow(client, root, until="interaction.requested")  # the clarification parks it
        tree = client.get("/agent/tree", params={"root": root}).json()
        assert tree["agents"][root]["status"] == "awaiting_user"

        said = client.post(
            f"/agent/{root}/intervene", json={"action": "comment", "content": "keep it cheap"}
        ).json()
        assert said["applied"] == "now" and said["agent"]["userComment"] == "keep it cheap"
        changed = client.post(
            f"/agent/{root}/intervene", json={"action": "modify", "content": "Plan a picnic"}
        ).json()
        assert changed["agent"]["status"] == "awaiting_user"
        assert changed["agent"]["userContent"] == "Plan a picnic"
        empty = client.post(f"/agent/{root}/intervene", json={"action": "comment"})
        assert empty.status_code == 422 and "content" in empty.json()["detail"]

        answered = client.post(f"/runs/{root}/answer", json={"text": "the garden one"})
        assert answered.status_code < 300, answered.text
        follow(client, root, until="end")
        one = client.get(f"/agent/{root}").json()
        assert one["status"] == "completed"
        assert one["state"]["prompt"] == "Plan a picnic"
        assert "Noted: keep it cheap." in one["run"]["result"]["answer"]
        assert [f["type"] for f in one["frames"]].count("intervention") == 2
        refused = client.post(f"/agent/{root}/intervene", json={"action": "delete"})
        assert refused.status_code == 409 and "finished" in refused.json()["detail"]


def test_a_comment_that_says_delete_is_a_comment_over_http(tmp_path: Path) -> None:
    with LiveServer(tree_runtime(tmp_path)) as server, server.client() as client:
        root = start(client, "tree", prompt=PARTY)["id"]
        follow(client, root, until="interaction.requested")
        said = client.post(
            f"/agent/{root}/intervene", json={"action": "comment", "content": "delete"}
        )
        assert said.status_code == 200, said.text
        agent = said.json()["agent"]
        assert said.json()["action"] == "comment" and agent["status"] == "awaiting_user"
        assert agent["intervention"] == {"action": "comment", "content": "delete"}
        frames = client.get(f"/runs/{root}/frames").json()["frames"]
        assert [(f["action"], f["content"]) for f in frames if f["type"] == "intervention"] == [
            ("comment", "delete")
        ]
        empty = client.post(f"/agent/{root}/intervene", json={"action": "modify", "content": " "})
        assert empty.status_code == 422 and "content" in empty.json()["detail"]
        assert client.get(f"/runs/{root}").json()["status"] == "awaiting_user"


def paused_for_subagents(client: httpx.Client, run_id: str) -> None:
    """Follow the run's stream until it pauses while its subagents work."""
    with client.stream("GET", f"/runs/{run_id}/stream") as response:
        for event in iter_events(response):
            if event.event == "status" and event.json()["status"] == "paused":
                return
    raise AssertionError(f"run {run_id} ended without pausing for its subagents")


def test_delete_goes_through_the_runtime_so_a_waiting_parent_learns_of_it(
    tmp_path: Path,
) -> None:
    registry = AgentRegistry()
    registry.register(TreeAgent.agent_type, TreeAgent)
    script = TreeScript(ambiguous=(FOOD,), subquestions={PARTY: [FOOD]})
    runtime = Runtime(SQLiteStore(tmp_path / "k.db"), model=script.model(), registry=registry)
    with LiveServer(runtime) as server, server.client() as client:
        root = start(client, "tree", prompt=PARTY)["id"]
        paused_for_subagents(client, root)  # its subagent asks a question and parks
        tree = client.get("/agent/tree", params={"root": root}).json()["agents"]
        (child,) = tree[root]["subagents"]
        assert tree[child]["status"] == "awaiting_user"

        deleted = client.delete(f"/runs/{child}")
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["status"] == "deleted" and deleted.json()["applied"] == "now"
        # the parent was waiting on it: it goes on, and reports the deletion
        assert follow(client, root)[-1].json()["status"] == "completed"
        parent = client.get(f"/runs/{root}").json()
        assert [s["status"] for s in parent["result"]["subagents"]] == ["deleted"]
        again = client.delete(f"/runs/{child}")
        assert again.status_code == 409 and "already deleted" in again.json()["detail"]


def test_a_bad_action_is_refused_naming_the_allowed_ones(tmp_path: Path) -> None:
    with LiveServer(tree_runtime(tmp_path)) as server, server.client() as client:
        root = start(client, "tree", prompt=PARTY)["id"]
        follow(client, root, until="interaction.requested")
        for body in ({"action": "explode"}, {"content": "delete"}, {"userComment": "delete"}):
            bad = client.post(f"/agent/{root}/intervene", json=body)
            assert bad.status_code == 422, bad.text
            assert "delete" in bad.json()["detail"] and "comment" in bad.json()["detail"], body
        assert client.get(f"/runs/{root}").json()["status"] == "awaiting_user"
