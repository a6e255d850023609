"""Services: one typed object of narrow capabilities; agents never see the runtime or the store."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kforge.engine.agent import StepOutcome
from kforge.engine.limits import RunLimits
from kforge.engine.run_context import RunContext
from kforge.engine.services import Services
from kforge.errors import ConfigurationError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.corpus import DEFAULT_CORPUS, Corpus
from kforge.rag.types import SourceDocument
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus
from kforge.tools.cache import ToolResultCache
from tests.engine.sample_agents import OneStepAgent


class Inspector(OneStepAgent):
    """Reports what its run was given."""

    agent_type = "test.inspector"
    seen: list[Any] = []

    async def step(self, ctx: RunContext) -> StepOutcome:
        services = ctx.services
        sessions = services.sessions
        Inspector.seen.append(
            {
                "given": sorted(
                    f.name
                    for f in dataclasses.fields(services)
                    if getattr(services, f.name) not in (None, (), {})
                ),
                "session": sessions.session_id if sessions else None,
                "turns": sessions.turns("router") if sessions else None,
                "corpus": len(ctx.corpus()),
                "public": sorted(n for n in dir(sessions) if not n.startswith("_")),
            }
        )
        return StepOutcome(True, {})


async def test_a_run_gets_capabilities_but_neither_the_runtime_nor_the_store() -> None:
    agents = AgentRegistry()
    agents.register(Inspector.agent_type, Inspector)
    store = MemoryStore()
    Corpus.open(store, DEFAULT_CORPUS).add_documents([SourceDocument("a", "Alpha beta.", "A")])
    Inspector.seen = []
    rt = Runtime(store, model=ScriptedModel(), registry=agents)
    run = await rt.run("test.inspector", session_id="s-1")
    assert run.status == RunStatus.COMPLETED
    (seen,) = Inspector.seen
    assert seen["given"] == ["agents", "corpora", "memory", "sessions"]
    assert seen["session"] == "s-1" and seen["turns"] == [] and seen["corpus"] == 1
    assert seen["public"] == ["session_id", "turns"]


def test_services_are_frozen_and_extra_is_read_only() -> None:
    services = Services(extra={"seen": []})
    with pytest.raises(dataclasses.FrozenInstanceError):
        services.corpora = None  # type: ignore[misc]
    with pytest.raises(TypeError):
        services.extra["other"] = 1  # type: ignore[index]


def test_a_run_without_corpora_says_how_to_get_them() -> None:
    ctx = RunContext(
        run_id="r",
        agent_type="t",
        model=ScriptedModel(),
        limits=RunLimits(),
        next_seq=1,
        flush=list,
    )
    with pytest.raises(ConfigurationError, match=r"no corpora to open 'default'.*kforge\.Runtime"):
        ctx.corpus()


def test_one_default_corpus_name() -> None:
    opened: list[str] = []

    class Corpora:
        def open(self, name: str) -> Corpus:
            opened.append(name)
            return Corpus(MemoryStore(), name)

    services = Services(corpora=Corpora())
    services.corpus()
    services.corpus("notes")
    assert opened == [DEFAULT_CORPUS, "notes"]


def test_a_dict_of_services_is_refused_and_told_the_typed_form() -> None:
    with pytest.raises(TypeError, match=r"services must be a kforge\.Services, not dict"):
        Runtime(MemoryStore(), services={"tool_cache": ToolResultCache()})  # type: ignore[arg-type]
    cache = ToolResultCache()
    rt = Runtime(MemoryStore(), services=Services(cache=cache, extra={"thing": 1}))
    assert rt.services.cache is cache and rt.services.extra == {"thing": 1}


def test_services_are_read_by_field_and_a_key_names_the_field() -> None:
    services = Services(extra={"thing": 1})
    with pytest.raises(TypeError, match=r"use services\.corpora"):
        services["corpora"]
    with pytest.raises(TypeError, match=r"use services\.cache"):
        services["tool_cache"]
    with pytest.raises(TypeError, match=r"use services\.extra\['thing'\]"):
        services["thing"]
    assert services.extra["thing"] == 1 and not hasattr(services, "get")


def test_services_load_the_tool_machinery_only_when_a_tool_asks_for_them() -> None:
    code = (
        "import sys\n"
        "from kforge import Runtime, Services\n"
        "services = Services(extra={'greeting': 'hello'})\n"
        "print(any(m.startswith('kforge.tools') for m in sys.modules))\n"
        "print(services.for_tools.extra['greeting'])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.stdout.split() == ["False", "hello"], done.stderr
