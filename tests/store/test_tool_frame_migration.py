"""A log written before calls were one ``tool.call`` and one ``tool.result`` frame (four frames
per call: ``agent.tool_call``, ``tool.start``, ``tool.success``/``tool.error``,
``agent.tool_result``) still loads, explains and resumes.

The fixture is a SQLite database at schema version 3 dumped to JSON, written by kforge before
the change: a react run that looked up a fact, then stopped for approval of ``save_fact``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from kforge.agents.react import ReactAgent
from kforge.engine.services import Services
from kforge.explain import explain_run
from kforge.frames import Observation, ToolCallFrame, ToolResultFrame, frame_from_dict
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import AgentRegistry, Runtime
from kforge.store.base import RunStatus
from kforge.store.sqlite import SQLiteStore
from kforge.tools import ToolRegistry, tool
from tests.table_dumps import insert_rows

FIXTURE = Path(__file__).parent / "data" / "old_tool_vocabulary.json"
OLD_TYPES = {"tool.start", "tool.success", "tool.error", "agent.tool_call", "agent.tool_result"}


def old_database(path: Path) -> str:
    dump = json.loads(FIXTURE.read_text())
    store = SQLiteStore(path)  # today's schema, then the tables are filled as version 3 left them
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM schema_version")
    for later in ("postings", "terms", "passages", "sources", "indexes"):  # migration 5's
        conn.execute(f"DROP TABLE search_{later}")
    insert_rows(conn, dump)
    conn.commit()
    conn.close()
    return str(dump["runs"]["rows"][0][0])


saved: list[str] = []


@tool(read_only=True)
def lookup_capital(country: str) -> str:
    """Look up the capital city of a country.

    Args:
        country: The country's English name, e.g. France.
    """
    raise AssertionError("the recorded result is replayed, never looked up again")


@tool
def save_fact(fact: str) -> str:
    """Save a fact to the notebook.

    Args:
        fact: The fact to keep.
    """
    saved.append(fact)
    return f"saved: {fact}"


def test_the_migration_leaves_one_call_and_one_result_frame_per_call(tmp_path: Path) -> None:
    run_id = old_database(tmp_path / "old.db")
    store = SQLiteStore(tmp_path / "old.db")
    frames = store.read_frames(run_id)
    assert not OLD_TYPES & {f.type for f in frames}
    [call] = [f for f in frames if isinstance(f, ToolCallFrame)]
    [result] = [f for f in frames if isinstance(f, ToolResultFrame)]
    assert call.tool_name == "lookup_capital" and call.arguments == {"country": "France"}
    assert call.reasoning == "Look it up" and call.plan_frame_id  # taken from agent.tool_call
    assert result.call_id == call.call_id and result.success
    assert result.summary == "The capital of France is Paris."
    [observation] = [f for f in frames if isinstance(f, Observation)]
    assert observation.call_id == call.call_id
    text = explain_run(frames)
    assert "call lookup_capital(country=France) — Look it up" in text
    assert "lookup_capital ok" in text and "tool calls: lookup_capital x1" in text
    store.close()


async def test_a_run_stopped_in_the_old_vocabulary_resumes_at_its_step(tmp_path: Path) -> None:
    run_id = old_database(tmp_path / "old.db")
    store = SQLiteStore(tmp_path / "old.db")
    agents = AgentRegistry()
    agents.register(ReactAgent.agent_type, ReactAgent)
    model = ScriptedModel([{"observation": "Saved.", "goal_achieved": True}, "Paris, saved."])
    rt = Runtime(
        store,
        model=model,
        registry=agents,
        services=Services(tools=ToolRegistry([lookup_capital, save_fact])),
    )
    await rt.resume(run_id, {"action": "approve"})
    done = await rt.wait(run_id)
    assert done.status == RunStatus.COMPLETED, done.error
    assert saved == ["Paris"]
    model.assert_consumed()  # the recorded decisions were not asked for again
    frames = store.read_frames(run_id)
    calls = [f for f in frames if isinstance(f, ToolCallFrame)]
    assert [c.tool_name for c in calls] == ["lookup_capital", "save_fact"]
    assert calls[1].reasoning == "Write it down"
    store.close()


def test_a_single_old_frame_reads_as_today_s_frame() -> None:
    start = frame_from_dict(
        {"type": "agent.tool_call", "tool_name": "t", "tool_arguments": {"a": 1}, "reasoning": "r"}
    )
    assert isinstance(start, ToolCallFrame) and start.arguments == {"a": 1}
    error = frame_from_dict(
        {"type": "agent.tool_result", "tool_name": "t", "success": False, "error_message": "boom"}
    )
    assert isinstance(error, ToolResultFrame) and not error.success and error.error == "boom"
