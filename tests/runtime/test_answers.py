"""Running an agent to its answer with nobody at hand: checkpoints approved, other questions
reported, the run_agent MCP tool on top."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.errors import ValidationError
from kforge.mcp.server import run_agent_tool
from kforge.runtime.answers import agent_args, run_to_answer
from kforge.tools.tool_context import ToolContext
from tests.agents.test_research import DOCS, Script, make_runtime
from tests.engine.sample_agents import make_registry


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    return tmp_path


async def test_research_runs_to_its_report_with_the_checkpoint_approved(corpus_dir: Path) -> None:
    rt = make_runtime(corpus_dir, Script())
    text = await run_to_answer(rt, "research", "How do agents work?", corpus="docs")
    assert text.startswith("# Research report: How do agents work?")
    assert "## Sources" in text


async def test_run_agent_tool_returns_the_answer(corpus_dir: Path) -> None:
    rt = make_runtime(corpus_dir, Script())

    async def runner(agent_type: str, prompt: str) -> str:
        return await run_to_answer(rt, agent_type, prompt, corpus="docs")

    tool = run_agent_tool(runner, ["research"])
    result = await tool.execute({"prompt": "How do agents work?"}, ToolContext())
    assert not result.is_error
    assert "# Research report" in result.content[0].as_text()


async def test_questions_other_than_checkpoints_are_reported_not_answered() -> None:
    from kforge.llm.testing.scripted import ScriptedModel
    from kforge.runtime import Runtime
    from kforge.store import MemoryStore

    registry = make_registry()
    registry.register("asker", lambda args: _Asker(), replace=True)
    rt = Runtime(MemoryStore(), model=ScriptedModel(), registry=registry)
    text = await run_to_answer(rt, "asker", "anything")
    assert "is waiting for a person: Which file?" in text
    with pytest.raises(ValidationError, match="empty"):
        await run_to_answer(rt, "asker", " ")


def test_agent_args_by_type() -> None:
    assert agent_args("research", "q", corpus="c") == {"question": "q", "corpus": "c"}
    assert agent_args("react", "do it", corpus="c") == {"goal": "do it"}


class _Asker:
    agent_type = "asker"

    async def step(self, ctx):  # type: ignore[no-untyped-def]
        await ctx.ask("Which file?")
        raise AssertionError("unreachable without an answer")

    def get_state(self):  # type: ignore[no-untyped-def]
        return {}

    def restore_state(self, state):  # type: ignore[no-untyped-def]
        pass

    def partial_result(self):  # type: ignore[no-untyped-def]
        return {}
