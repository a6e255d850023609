"""One token budget for runs: per run and per session, a warning frame at the threshold, a
hard stop that pauses the run with a limit frame, and cost from the configured prices."""

from __future__ import annotations

import pytest

from kforge.engine.limits import RunLimits
from kforge.errors import ConfigurationError
from kforge.frames import LimitReached, LimitWarning, UsageFrame
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import ModelResponse, Usage
from kforge.memory.tokens import PriceTable
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus
from tests.engine.sample_agents import make_registry


def replies(*numbers: int) -> list[ModelResponse]:
    """Each reply costs 100 tokens: 80 in, 20 out."""
    return [ModelResponse(text=str(n), usage=Usage(80, 20)) for n in numbers]


def runtime(model: ScriptedModel, limits: RunLimits, **kwargs: object) -> Runtime:
    return Runtime(MemoryStore(), model=model, registry=make_registry(), limits=limits, **kwargs)  # type: ignore[arg-type]


async def test_a_warning_frame_at_the_threshold_then_a_pause_at_the_limit() -> None:
    rt = runtime(ScriptedModel(replies(1, 2, 3, 4)), RunLimits(max_tokens=300))
    run = await rt.run("test.counter", {"target": 9})
    assert run.status == RunStatus.PAUSED and run.pause_reason == "limit:max_tokens"
    assert run.result == {"values": [1, 2, 3]}  # the best partial result is kept
    frames = rt.frames(run.id)
    [warning] = [f for f in frames if isinstance(f, LimitWarning)]
    # 80 % of 300 is 240: the third call takes the run from 200 to 300 tokens
    assert (warning.limit, warning.value, warning.maximum) == ("max_tokens", 300, 300)
    [stop] = [f for f in frames if isinstance(f, LimitReached)]
    assert stop.limit == "max_tokens" and stop.seq > warning.seq


async def test_the_warning_comes_once_when_the_threshold_is_crossed() -> None:
    limits = RunLimits(max_tokens=1000, token_warning_threshold=0.25)
    rt = runtime(ScriptedModel(replies(1, 2, 3, 4)), limits)
    run = await rt.run("test.counter", {"target": 4})
    assert run.status == RunStatus.COMPLETED
    [warning] = [f for f in rt.frames(run.id) if isinstance(f, LimitWarning)]
    assert warning.value == 300  # the call that took the run from 200 to 300 tokens (25 %)


async def test_runs_of_one_session_share_the_session_budget() -> None:
    store = MemoryStore()
    rt = Runtime(
        store,
        model=ScriptedModel(replies(1, 2, 3, 4, 5)),
        registry=make_registry(),
        limits=RunLimits(max_session_tokens=400),
    )
    first = await rt.run("test.counter", {"target": 3}, session_id="s")
    assert first.status == RunStatus.COMPLETED
    second = await rt.run("test.counter", {"target": 3}, session_id="s")
    assert second.status == RunStatus.PAUSED
    assert second.pause_reason == "limit:max_session_tokens"
    assert second.result == {"values": [4]}
    other = await rt.run("test.counter", {"target": 1}, session_id="t")
    assert other.status == RunStatus.COMPLETED  # another session starts from nothing


async def test_cost_comes_from_the_configured_prices_and_can_stop_a_run() -> None:
    prices = PriceTable.from_mapping({"test:*": {"input": 1000.0, "output": 5000.0}})
    # each call: 80 * 1000 / 1e6 + 20 * 5000 / 1e6 = 0.08 + 0.1 = 0.18 USD
    rt = runtime(ScriptedModel(replies(1, 2, 3)), RunLimits(max_cost_usd=0.3), prices=prices)
    run = await rt.run("test.counter", {"target": 3})
    assert run.status == RunStatus.PAUSED and run.pause_reason == "limit:max_cost_usd"
    usage = [f for f in rt.frames(run.id) if isinstance(f, UsageFrame)]
    assert [u.cost_usd for u in usage] == [pytest.approx(0.18), pytest.approx(0.18)]
    assert usage[-1].run_cost_usd == pytest.approx(0.36)


async def test_prices_come_from_the_config_file(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "kforge.toml"
    config.write_text('[prices]\n"test:*" = { input = 1000.0, output = 5000.0 }\n')
    monkeypatch.setenv("KFORGE_CONFIG", str(config))
    rt = runtime(ScriptedModel(replies(1)), RunLimits())
    run = await rt.run("test.counter", {"target": 1})
    [usage] = [f for f in rt.frames(run.id) if isinstance(f, UsageFrame)]
    assert usage.cost_usd == pytest.approx(0.18)


async def test_a_cost_limit_needs_a_price_for_the_model() -> None:
    model = ScriptedModel(replies(1), name="openai:unpriced")
    rt = runtime(model, RunLimits(max_cost_usd=1.0), prices=PriceTable())
    run = await rt.run("test.counter", {"target": 1})
    assert run.status == RunStatus.FAILED
    assert "no price for 'openai:unpriced'" in (run.error or "")
    assert "[prices]" in (run.error or "")
    with pytest.raises(ConfigurationError, match=r"\[prices\]"):
        PriceTable.from_mapping({"openai:x": {"input": "free"}})
