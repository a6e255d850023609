"""The agent tree routes over a real tree agent: read the tree, comment, modify and delete
agents over HTTP, and see a finished agent refuse an intervention."""

from __future__ import annotations

from pathlib import Path

from kforge.agents.tree import TreeAgent
from kforge.runtime import AgentRegistry, Runtime
from kforge.store.sqlite import SQLiteStore
from tests.agents.tree_model import TreeScript
from tests.server.helpers import LiveServer
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
