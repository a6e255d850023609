"""The agent registry: factories by type name, and tables of targets imported on first use."""

from __future__ import annotations

from typing import Any

import pytest

from kforge.engine.registry import AgentRegistry
from kforge.errors import ConfigurationError
from tests.engine.sample_agents import CounterAgent


def test_an_unknown_type_names_the_known_ones_and_the_fix() -> None:
    registry = AgentRegistry({"react": "kforge.agents.react:ReactAgent"})
    registry.register("counter", lambda args: CounterAgent(args))
    with pytest.raises(ConfigurationError) as caught:
        registry.create("nope", {})
    assert "registered: counter, react" in str(caught.value)
    assert "kforge.register_agent" in str(caught.value)


def test_a_registry_without_built_ins_knows_only_what_was_registered() -> None:
    registry = AgentRegistry()
    factory: Any = CounterAgent
    registry.register("counter", factory)
    assert registry.names() == ["counter"] and "react" not in registry
