"""Realistic inputs for every prompt the agents and capabilities send, each rendered to the exact
text the model sees. ``moved_prompts.json`` holds that text as it was when the prompts were still
inline strings; ``test_moved_prompts.py`` checks the library renders it byte for byte."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

from kforge.llm.types import Message, ToolCall, ToolSpec
from kforge.rag.grading import GradedResult
from kforge.rag.types import Chunk, SearchHit

__all__ = ["CASES"]

Case = Callable[[], Any]


def _chunk(text: str, *, heading: str = "Sampling", file: str = "notes/llm.md") -> Chunk:
    return Chunk(
        id="c1", source="docs", file=file, title="LLM notes", heading=heading, page=None,
        start=0, end=len(text), text=text,
    )  # fmt: skip


def _hit(text: str, **kw: Any) -> SearchHit:
    return SearchHit(_chunk(text, **kw), 3.2, 1)


def _messages(messages: list[Message]) -> list[list[str]]:
    return [[m.role, m.content] for m in messages]


SEARCH = ToolSpec(
    "search_documents",
    "Search the user's documents. ",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
FETCH = ToolSpec(
    "fetch_url",
    "Fetch a web page as text.",
    {"type": "object", "properties": {"url": {"type": "string"}, "max_chars": {"type": "integer"}}},
)
LONG = "Temperature scales the logits before sampling. " * 80


def _loop() -> dict[str, Case]:
    from kforge.agents.loop import prompts as p

    return {
        "observe/short": lambda: _messages(
            p.observation_messages(
                "What is nucleus sampling?",
                ToolCall("search_documents", {"query": "nucleus sampling"}),
                "[1] Top-p sampling keeps the smallest set of tokens whose mass exceeds p.",
            )
        ),
        "observe/long-result": lambda: _messages(
            p.observation_messages(
                "Explain temperature, précisément.",
                ToolCall("fetch_url", {"url": "https://example.org/t", "max_chars": 5000}),
                LONG,
            )
        ),
        "observe/empty-args": lambda: _messages(
            p.observation_messages("Say hi", ToolCall("clock", {}), "")
        ),
        "synthesize": lambda: p.SYNTHESIZE_SYSTEM,
        "react/with-lessons": lambda: p.react_system(
            "Compare BM25 and dense retrieval", [SEARCH, FETCH], 6, ["fetch_url 404: use search"]
        ),
        "react/no-tools": lambda: p.react_system("Plan a trip", [], 3, []),
        "retry/invalid": lambda: p.retry_request(
            "the decision must be a JSON object with 'thought' and 'action' (got [])"
        ),
        "retry/retired": lambda: p.retry_request("'x' failed 3 times"),
    }


def _research() -> dict[str, Case]:
    from kforge.agents.research import prompts as p

    cases: dict[str, Case] = {
        f"initial/{phase}": (lambda phase=phase: p.INITIAL_PROMPTS[phase])
        for phase in ("decompose", "answer", "rise_above", "expand")
    }
    cases["discovery"] = lambda: p.DISCOVERY_PROMPT
    cases["gaps"] = lambda: p.GAPS_PROMPT
    cases["initial/keys"] = lambda: sorted(p.INITIAL_PROMPTS)
    cases["new-category/plain"] = lambda: p.new_category_request(
        "How do agents keep a human in the loop?", "Interruptions"
    )
    cases["new-category/quoted"] = lambda: p.new_category_request(
        'What is "RAG" {v2}?', "Costs & risks"
    )
    return cases


def _router() -> dict[str, Case]:
    from kforge.agents.common import answer
    from kforge.agents.router import prompts as router_prompts

    return {
        "guardrail/plain": lambda: router_prompts.guardrail_system("the user's documents"),
        "guardrail/topics": lambda: router_prompts.guardrail_system(
            "Python packaging (documents: Wheels; PEP 517 {build} hooks)"
        ),
        "router/retrieve": lambda: router_prompts.router_system(
            "- retrieve_chunks: search the user's documents; give a search query."
        ),
        "router/both": lambda: router_prompts.router_system(
            "- retrieve_chunks: search the user's documents; give a search query.\n"
            "- web_search: search the web, for recent events or topics the documents lack; "
            "give a search query."
        ),
        "model_only": lambda: answer.MODEL_ONLY_SYSTEM,
    }


def _rag() -> dict[str, Case]:
    from kforge.rag import grading, grounded, rewrite

    graded = [
        GradedResult(_hit("Top-k keeps k tokens."), "not_relevant", 0.8, "about top-k, not top-p"),
        GradedResult(_hit("Top-p keeps mass p.", heading=""), "relevant", 0.9, "defines it"),
        GradedResult(_hit("Beam search.", file="b.md"), "not_relevant", 0.6, "x" * 300),
    ]
    return {
        "grade/plain": lambda: _messages(
            grading._prompt("What is top-p?", _hit("Top-p keeps mass p."), "")
        ),
        "grade/context-long": lambda: _messages(
            grading._prompt("Why temperature?", _hit(LONG), "The user studies sampling.")
        ),
        "rewrite/misses": lambda: _messages(
            rewrite._prompt("What is top-p?", graded, ["What is top-p?", "nucleus sampling"])
        ),
        "rewrite/none": lambda: _messages(rewrite._prompt("q", [], ["q"])),
        "generate": lambda: grounded.GENERATE_SYSTEM,
    }


CONSTANTS = {
    "memory:reflection": "kforge.memory.reflexion:REFLECTION_PROMPT",
    "memory:alternative": "kforge.memory.reflexion:ALTERNATIVE_PROMPT",
    "memory:compaction": "kforge.memory.compaction:COMPACTION_PROMPT",
    "tree:clarify": "kforge.agents.tree.prompts:CLARIFY_PROMPT",
    "tree:missing": "kforge.agents.tree.prompts:MISSING_PROMPT",
    "tree:execute": "kforge.agents.tree.prompts:EXECUTE_PROMPT",
    "tree:resolve": "kforge.agents.tree.prompts:RESOLVE_PROMPT",
    "build_understand:build/summary": "kforge.agents.build.prompts:SUMMARY_SYSTEM",
    "build_understand:understand/assess": "kforge.agents.understand.prompts:ASSESS_PROMPT",
    "build_understand:understand/remedial": "kforge.agents.understand.prompts:REMEDIAL_PROMPT",
    "build_understand:understand/check": "kforge.agents.understand.prompts:CHECK_PROMPT",
    "build_understand:understand/grade": "kforge.agents.understand.prompts:GRADE_PROMPT",
}
"""Prompts the agents send as they are, by the module attribute that holds them."""


def _constant(where: str) -> str:
    module, _, name = where.partition(":")
    return str(getattr(importlib.import_module(module), name))


def _compaction_request(entries: int, limit: int) -> list[list[str]]:
    import asyncio

    from kforge.llm.types import ModelResponse
    from kforge.memory.compaction import _model_summary
    from kforge.memory.window import ContextWindow

    window = ContextWindow.create("answer the user's question about solar panels", 4000)
    window.record_decision("use the 2024 datasheet")
    window.set_preference("units", "metric")
    for i in range(entries):
        window.add("user" if i % 2 else "tool", f"entry {i}: " + "watt " * 20, name="search")
    seen: list[Message] = []

    async def complete(messages: list[Message], settings: Any) -> ModelResponse:
        seen.extend(messages)
        return ModelResponse(text="Short summary.")

    asyncio.run(_model_summary(window, window.history[:-1], complete, limit, None))
    return _messages(seen)


def _memory() -> dict[str, Case]:
    return {
        "compaction-request/few": lambda: _compaction_request(3, 120),
        "compaction-request/many": lambda: _compaction_request(9, 1),
    }


def _tree() -> dict[str, Case]:
    from kforge.agents.tree import prompts as d

    return {
        "subquestions/3": lambda: d.subquestions_prompt(3),
        "subquestions/1": lambda: d.subquestions_prompt(1),
    }


def _tools() -> dict[str, Case]:
    import asyncio

    from kforge.llm.types import ModelResponse
    from kforge.tools.builtin.explain import ExplainTextTool
    from kforge.tools.builtin.web import SummarizePageTool

    class Recorder:
        name = "recorder"

        def __init__(self) -> None:
            self.seen: list[Message] = []

        async def complete(self, messages: list[Message], settings: Any = None, **_: Any) -> Any:
            self.seen = list(messages)
            return ModelResponse(text="It means this.")

    def run(arguments: dict[str, Any]) -> list[list[str]]:
        model = Recorder()
        asyncio.run(ExplainTextTool(model).execute(arguments))  # type: ignore[arg-type]
        return _messages(model.seen)

    def summary(sentences: int, focus: str) -> list[list[str]]:
        model = Recorder()
        arguments = {"text": LONG * 5, "max_sentences": sentences, "focus": focus}
        asyncio.run(SummarizePageTool(model=model).execute(arguments))  # type: ignore[arg-type]
        return _messages(model.seen)

    return {
        "explain/plain": lambda: run({"text": "Attention is all you need."}),
        "explain/context": lambda: run(
            {"text": "It scales.", "context": LONG * 3, "audience": "beginner"}
        ),
        "summary/focus": lambda: summary(3, "temperature"),
        "summary/bare": lambda: summary(5, ""),
    }


def _engine() -> dict[str, Case]:
    from kforge.prompts import prompt_text

    return {
        "reentry": lambda: prompt_text(
            "PHASE_RETURN",
            phase="decompose",
            backward_trigger="synthesis_reveals_missing_category",
            backward_trigger_detail="(none)",
            existing_work_summary="- Costs: what does it cost?\n- Risks: what can fail?",
        )
    }


def _llm() -> dict[str, Case]:
    from kforge.llm.structured import json_instructions, repair_message
    from kforge.llm.toolprompt import tool_instructions

    return {
        "tools/two": lambda: tool_instructions([SEARCH, FETCH]),
        "tools/one": lambda: tool_instructions([FETCH]),
        "json": lambda: json_instructions(SEARCH.input_schema),
        "repair/list": lambda: _messages(
            [repair_message(["'query' is required", "unexpected key 'q'"])]
        ),
        "repair/text": lambda: _messages([repair_message("the reply is not JSON")]),
    }


def _all() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for family, build in (
        ("loop", _loop),
        ("research", _research),
        ("router", _router),
        ("rag", _rag),
        ("tree", _tree),
        ("memory", _memory),
        ("tools", _tools),
        ("engine", _engine),
        ("llm", _llm),
    ):
        cases.update({f"{family}:{name}": case for name, case in build().items()})
    cases.update(
        {name: (lambda where=where: _constant(where)) for name, where in CONSTANTS.items()}
    )
    return cases


CASES = _all()


def rendered() -> dict[str, str]:
    """Every case's text, as JSON when a case gives messages."""
    return {
        name: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        for name, value in ((name, case()) for name, case in CASES.items())
    }
