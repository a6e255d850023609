"""The built-in agents' table, beside the agents: loaded lazily by the process-wide registry."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kforge.agents.builtin import BUILTIN_AGENTS, default_registry
from kforge.engine.registry import AgentRegistry
from kforge.errors import ConfigurationError
from tests.engine.sample_agents import CounterAgent


def test_the_registry_imports_no_agent_until_one_is_asked_for() -> None:
    code = (
        "import sys; from kforge.agents.builtin import default_registry as r; "
        "names = r.names(); "
        "before = any(m.startswith('kforge.agents.') for m in sys.modules "
        "if m != 'kforge.agents.builtin'); "
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


def test_the_engine_names_no_agent() -> None:
    import kforge.engine
    import kforge.engine.registry

    assert not hasattr(kforge.engine.registry, "BUILTIN_AGENTS")
    assert "default_registry" not in kforge.engine.__all__
    assert AgentRegistry().names() == []


def test_a_built_in_agent_needs_no_registration_call() -> None:
    import kforge.agents.react
    import kforge.agents.tree

    assert not hasattr(kforge.agents.react, "register")
    assert not hasattr(kforge.agents.tree, "register")
    assert {"react", "tree", "router"} <= set(AgentRegistry(BUILTIN_AGENTS).names())


def test_built_in_agents_are_known_without_a_registration_call() -> None:
    """Every built-in agent comes from the table alone: no agent package offers a
    ``register()`` that would only repeat what the table already says."""
    import importlib

    for agent_type, target in BUILTIN_AGENTS.items():
        module = target.split(":")[0]
        package = importlib.import_module(module.removesuffix(".agent"))
        assert not hasattr(package, "register"), f"{package.__name__}.register"
        assert agent_type in default_registry
        assert default_registry.factory(agent_type) is not None
