"""What agents say streams over ``/agent/stream?deltas=true`` as ``text-delta`` events: the
model's text while it is written, then the rest of the recorded answer in pieces. Joined, an
agent's deltas are its answer; a replay or a resumed stream gives no piece twice."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from kforge.agents.tree import TreeAgent
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message
from kforge.runtime import AgentRegistry, Runtime
from kforge.store.sqlite import SQLiteStore
from tests.agents.tree_model import TreeScript, request_of
from tests.server.helpers import Event, LiveServer, iter_events
from tests.server.test_api import start

PARTY = "Plan my birthday party"
FOOD = "What food should we serve?"
WORDS = ["The ", "party ", "needs ", "a ", "cake. ", "Invite ", "ten ", "friends."]


class Writer:
    """The tree's decisions from ``TreeScript``; answers streamed a word at a time, the root's
    each only once the test lets it (after the listener received the word before)."""

    def __init__(self) -> None:
        self.script = TreeScript(subquestions={PARTY: [FOOD]})
        self.permits = threading.Semaphore(0)

    def model(self) -> FunctionModel:
        return FunctionModel(self.script, stream_function=self.words, name="function:writer")

    async def words(self, messages: list[Message], info: CallInfo) -> AsyncIterator[str]:
        mine = request_of(messages) == PARTY
        for word in WORDS if mine else ["Cake ", "and ", "fruit."]:
            if mine:
                await asyncio.to_thread(self.permits.acquire, True, 60)
            yield word


def tree_events(client: httpx.Client, root: str, last_id: str | None = None) -> list[Event]:
    headers = {"Last-Event-ID": last_id} if last_id else {}
    params = {"root": root, "deltas": "true"}
    with client.stream("GET", "/agent/stream", params=params, headers=headers) as response:
        assert response.status_code == 200
        return list(iter_events(response))


def said(events: list[Event], agent: str) -> str:
    return "".join(
        e.json()["textDelta"]
        for e in events
        if e.event == "text-delta" and e.json()["agentId"] == agent
    )


def test_agents_text_streams_as_written_and_joins_to_their_answers(tmp_path: Path) -> None:
    registry = AgentRegistry()
    registry.register(TreeAgent.agent_type, TreeAgent)
    writer = Writer()
    runtime = Runtime(SQLiteStore(tmp_path / "k.db"), model=writer.model(), registry=registry)
    with LiveServer(runtime) as server, server.client() as client:
        root = start(client, "tree", prompt=PARTY)["id"]
        live: list[Event] = []
        params = {"root": root, "deltas": "true"}
        with client.stream("GET", "/agent/stream", params=params) as response:
            for event in iter_events(response):
                live.append(event)
                if len(live) == 1 or (
                    event.event == "text-delta" and event.json()["agentId"] == root
                ):
                    writer.permits.release()  # the root's next word only once this one came
                if event.event == "end":
                    break
        answer = client.get(f"/runs/{root}").json()["result"]["answer"]
        types = [e.event for e in live]
        speaking = next(
            i
            for i, e in enumerate(live)
            if e.event == "agent.speaking" and e.json()["run_id"] == root
        )
        written = [
            e.json()["textDelta"]
            for e in live[:speaking]
            if e.event == "text-delta" and e.json()["agentId"] == root
        ]
        assert written[: len(WORDS)] == WORDS  # word by word, as the model wrote them
        assert said(live, root) == answer and answer.startswith("The party needs a cake.")
        assert "\n\nSubquestions:\n" in answer  # the rest of the answer came after it, in pieces
        assert "agent.token" not in types
        children = {e.json()["agentId"] for e in live if e.event == "text-delta"} - {root}
        (child,) = children
        child_answer = client.get(f"/runs/{child}").json()["result"]["answer"]
        assert said(live, child) == child_answer == "Cake and fruit."

        replay = tree_events(client, root)
        assert said(replay, root) == answer and said(replay, child) == child_answer
        assert [e for e in replay if e.event == "text-delta"], "a replay gives the answer too"

        middle = [e for e in live if e.event == "text-delta" and e.json()["agentId"] == root][2]
        had = "".join(WORDS[:3])
        mine = [p for p in (middle.id or "").split(",") if p.startswith(f"{root}:")]
        assert mine and mine[0].endswith(f"+{len(had)}")
        resumed = tree_events(client, root, middle.id)
        assert had + said(resumed, root) == answer  # the rest, nothing twice
        assert said(tree_events(client, root, live[-2].id), root) == ""
