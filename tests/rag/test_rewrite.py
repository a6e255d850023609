from __future__ import annotations

from kforge.errors import ModelUnavailableError
from kforge.llm.structured import schema_for
from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.grading import GradedResult
from kforge.rag.rewrite import Rewrite, fallback_rewrite, normalize_query, rewrite_query
from tests.rag.helpers import FakeComplete, make_hit

MISS = [GradedResult(make_hit(0), "not_relevant", 0.9, "about taxes, not agents")]


async def test_model_rewrite_is_used_when_new() -> None:
    with ScriptedModel([{"query": "ReAct reasoning acting prompting"}]) as model:
        new = await rewrite_query("how do react agents work", MISS, model.complete)
    assert new == "ReAct reasoning acting prompting"
    call = model.calls[0]
    assert call.output_schema == schema_for(Rewrite)
    assert "about taxes, not agents" in call.messages[-1].content


async def test_a_repeated_query_is_replaced_by_a_keyword_rewrite() -> None:
    fake = FakeComplete([{"query": "How do ReAct agents work?"}])
    new = await rewrite_query("how do react agents work", MISS, fake)
    assert normalize_query(new) != normalize_query("how do react agents work")
    assert new == "react agents work"  # the question's focus


async def test_model_failure_falls_back_to_a_keyword_rewrite() -> None:
    fake = FakeComplete([ModelUnavailableError("down")])
    new = await rewrite_query("what is the role of memory in agents", MISS, fake)
    assert new == "role memory agents"


def test_fallback_avoids_every_query_already_tried() -> None:
    tried = ["memory agents", "memory agents overview"]
    new = fallback_rewrite("memory agents", tried)
    assert normalize_query(new) not in {normalize_query(t) for t in tried}
    assert fallback_rewrite("", [""]) != ""
