"""Agent arguments are checked once, strictly, naming the argument; agent state round-trips
through its one dataclass definition."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from kforge import jsoncodec
from kforge.agents.loop import ReactLoop
from kforge.agents.loop.config import LoopConfig
from kforge.agents.loop.state import LoopState
from kforge.agents.react import ReactAgent
from kforge.agents.research import ResearchAgent
from kforge.agents.router import RouterAgent, RouterState
from kforge.engine.arguments import parse_arguments
from kforge.errors import ValidationError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore


@pytest.mark.parametrize(
    ("agent", "args", "message"),
    [
        (ReactAgent, {"goal": "g", "allow_ask": "false"}, "'allow_ask' must be true or false"),
        (ReactAgent, {"goal": "g", "max_time_s": "60"}, "'max_time_s' must be a number"),
        (ReactAgent, {"goal": "g", "max_retries": True}, "'max_retries' must be a positive"),
        (ReactAgent, {"goal": "g", "temperature": 3}, "'temperature' must be at most 2"),
        (ReactAgent, {"goal": "g", "preferences": ["x"]}, "'preferences' must be an object"),
        (RouterAgent, {"question": "q", "web_search": "no"}, "'web_search' must be true or"),
        (RouterAgent, {"question": "q", "max_tokens": 0}, "'max_tokens' must be a positive"),
        (ResearchAgent, {"question": "q", "review_answers": "false"}, "'review_answers' must"),
        (ResearchAgent, {"question": "q", "max_backtracks": "2"}, "'max_backtracks' must be an"),
        (ResearchAgent, {"question": "q", "answer": "poem"}, "'answer' must be one of extractive"),
    ],
)
def test_an_argument_of_the_wrong_kind_is_refused_by_name(
    agent: Any, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message) as caught:
        agent(args)
    assert f"(got {list(args.values())[-1]!r})" in str(caught.value)


async def test_a_run_with_a_bad_argument_is_refused_before_it_exists() -> None:
    store = MemoryStore()
    rt = Runtime(store, model=ScriptedModel())
    with pytest.raises(ValidationError, match="react agent: 'allow_ask' must be true or false"):
        await rt.start("react", {"goal": "g", "allow_ask": "false"})
    assert store.list_runs() == []


def test_null_means_the_default_and_unknown_arguments_are_ignored() -> None:
    args = {"max_steps": None, "allow_ask": False, "colour": "blue"}
    assert parse_arguments(LoopConfig, args, agent="react") == LoopConfig(allow_ask=False)
    assert parse_arguments(LoopConfig, {"max_time_s": 60}, agent="react").max_time_s == 60.0


def test_loop_state_saves_every_field_once_and_restores_it() -> None:
    loop = ReactLoop("g", LoopConfig(max_steps=4), user_id="ann", preferences={"units": "si"})
    state = loop.state
    state.iteration, state.failures, state.tokens = 2, {"search": 1}, [10, 20]
    state.suggestion = {"name": "search", "arguments": {}}
    saved = jsoncodec.loads(jsoncodec.dumps(loop.to_dict()))
    # a field the instance does not hold (still the class's default) is left out
    unset = {f.name for f in fields(LoopState) if not f.init and f.name not in saved}
    assert unset == {"window", "finished", "answer", "goal_achieved", "stop_reason"} | {
        "elapsed_s",
        "errors",
    }
    assert all(getattr(state, name) == getattr(LoopState("g"), name) for name in unset)
    restored = ReactLoop.restore(saved)
    assert restored.to_dict() == saved and restored.state.config == LoopConfig(max_steps=4)
    assert (restored.state.failures, restored.state.tokens) == ({"search": 1}, [10, 20])
    assert restored.state.preferences == {"units": "si"} and restored.state.user_id == "ann"


def test_router_state_restores_from_an_older_save_by_field_name() -> None:
    agent = RouterAgent({"question": "q"})
    older = {"node": "grading", "iteration": 1, "queries": ["q"], "retired_field": 1}
    agent.restore_state({**older, "args": {"question": "q"}, "turns": []})
    assert (agent.state.node, agent.state.iteration, agent.state.queries) == ("grading", 1, ["q"])
    assert agent.state.passages == [] and not hasattr(agent.state, "retired_field")
    saved = agent.get_state()
    assert set(saved) <= {f.name for f in fields(RouterState)} | {"args", "turns"}
    again = RouterAgent({"question": "q"})
    again.restore_state(jsoncodec.loads(jsoncodec.dumps(saved)))
    assert vars(again.state) == vars(agent.state) and again.get_state() == saved
