"""The agent registry: built-in agents load from a lazy table, below the agents that use it."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from kforge.engine.registry import BUILTIN_AGENTS, AgentRegistry, default_registry
from kforge.errors import ConfigurationError
from tests.engine.sample_agents import CounterAgent


def test_the_registry_imports_no_agent_until_one_is_asked_for() -> None:
    code = (
        "import sys; from kforge.engine.registry import default_registry as r; "
        "names = r.names(); before = 'kforge.agents' in sys.modules; "
        "agent = r.create('react', {'goal': 'g'}); "
        "print(','.join(names), before, type(agent).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, before, created = out.stdout.split()
    assert set(names.split(",")) >= {"react", "research", "router"}
    assert (before, created) == ("False", "ReactAgent")


def test_the_runtime_re_exports_the_one_registry() -> None:
    import kforge
    import kforge.runtime

    assert kforge.runtime.default_registry is default_registry
    assert kforge.runtime.AgentRegistry is AgentRegistry
    assert kforge.register_agent is kforge.runtime.register_agent


def test_a_built_in_name_is_taken_unless_replaced() -> None:
    registry = AgentRegistry(BUILTIN_AGENTS)
    with pytest.raises(ConfigurationError, match="'react' is already registered"):
        registry.register("react", CounterAgent)
    registry.register("react", CounterAgent, replace=True)
    assert isinstance(registry.create("react", {}), CounterAgent)


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
