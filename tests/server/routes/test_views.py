"""The routes the web UI draws from: an agent's phase graph, a run's steps, the state after
any step with what the step changed, and the prompt of any model call."""

from __future__ import annotations

from typing import Any

from kforge.agents.loop.prompts import ObservationReply
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.memory.compaction import COMPACTION_PROMPT
from kforge.server import ServerSettings
from kforge.tools import tool
from tests.agents.helpers import runtime as react_runtime
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


def test_each_model_call_shows_the_prompt_it_was_sent_across_compactions() -> None:
    """The prompt route rebuilds, from each call's recorded delta, exactly the messages the
    model received, before and after the context was compacted."""
    sent: list[list[Message]] = []

    @tool(read_only=True)
    def read_page(page: int) -> str:
        """Read one page of the report.

        Args:
            page: The page number, from 1.
        """
        return f"Page {page}: " + "lorem ipsum " * 60

    def reply(messages: list[Message], info: CallInfo) -> Any:
        sent.append(list(messages))
        if messages[0].content == COMPACTION_PROMPT:
            return "Pages were read."
        if info.output_schema == schema_for(ObservationReply):
            return {"observation": "Page read.", "goal_achieved": False}
        if info.output_schema is None:
            return "The report is about lorem ipsum."
        return {
            "thought": "Read on",
            "action": "tool_call",
            "tool": "read_page",
            "arguments": {"page": len(sent)},
        }

    model = FunctionModel(reply)
    runtime = react_runtime(model, read_page)
    args = {"goal": "Summarise the report.", "max_steps": 10, "context_tokens": 1500}
    with LiveServer(runtime, ServerSettings(), model=model) as server:
        run = server.call(runtime.run("react", {**args, "allow_ask": False}))
        with server.client() as client:
            frames = client.get(f"/runs/{run.id}/frames", params={"limit": 1000}).json()
            calls = [f for f in frames["frames"] if f["type"] == "model.call"]
            assert any(f["type"] == "context.compaction" for f in frames["frames"])
            assert len(calls) == len(sent)
            copied_after_summary = False
            for frame, received in zip(calls, sent, strict=True):
                answer = client.get(f"/runs/{run.id}/calls/{frame['seq']}/prompt")
                body = answer.json()
                assert body["recorded"] and body["purpose"] == frame["purpose"]
                shown = [{k: v for k, v in m.items() if k != "fresh"} for m in body["messages"]]
                assert shown == [m.to_dict() for m in received]
                summary = [
                    i for i, m in enumerate(shown) if m["content"].startswith("Summary of earlier")
                ]
                if summary and not all(m["fresh"] for m in body["messages"][summary[0] + 1 :]):
                    copied_after_summary = True  # what compaction kept is a copy, not new
            assert copied_after_summary
            tool_call = next(f for f in frames["frames"] if f["type"] == "tool.call")
            wrong = client.get(f"/runs/{run.id}/calls/{tool_call['seq']}/prompt")
            assert wrong.status_code == 422
            assert "'tool.call' frame, not a model call" in wrong.json()["detail"]
            last = frames["frames"][-1]["seq"]
            past = client.get(f"/runs/{run.id}/calls/{last + 1}/prompt")
            assert past.status_code == 404 and f"1 to {last}" in past.json()["detail"]
            assert client.get("/runs/nope/calls/1/prompt").status_code == 404
