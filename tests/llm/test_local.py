"""The bundled local model: schema-valid structured output every time, tool decisions, streaming,
cancellation, its own tokenizer, and one load per process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

import kforge
from kforge.errors import ConfigurationError, ModelError
from kforge.frames import Frame, frame_to_dict
from kforge.llm import get_model, parse_output, schema_for
from kforge.llm.local import LocalModel
from kforge.llm.local.runtime import bundled_model_path
from kforge.llm.structured import schema_errors
from kforge.llm.types import Message, ModelSettings, ToolSpec
from kforge.store import SQLiteStore

pytestmark = pytest.mark.slow

SRC = Path(kforge.__file__).resolve().parents[1]

GRADE = {
    "type": "object",
    "properties": {
        "relevance": {"enum": ["relevant", "not_relevant"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reasoning": {"type": "string", "maxLength": 160},
    },
    "required": ["relevance", "confidence", "reasoning"],
}
ROUTER = {
    "type": "object",
    "properties": {
        "action": {"enum": ["retrieve", "web_search", "generate", "out_of_scope"]},
        "query": {"type": "string", "minLength": 1, "maxLength": 120},
    },
    "required": ["action", "query"],
}
PLAN = {
    "type": "object",
    "properties": {
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "maxLength": 80},
                    "needs_tool": {"type": "boolean"},
                },
                "required": ["title", "needs_tool"],
            },
        }
    },
    "required": ["steps"],
}


class Review(BaseModel):
    rating: int = Field(ge=1, le=5)
    summary: str = Field(max_length=120)
    tags: list[Literal["clear", "vague", "wrong", "complete"]] = Field(max_length=3)
    follow_up: str | None = Field(default=None, max_length=80)


SEARCH = ToolSpec(
    "web_search",
    "Search the web for a query.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 100},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["query", "max_results"],
    },
)
CALC = ToolSpec(
    "calculator",
    "Evaluate an arithmetic expression.",
    {
        "type": "object",
        "properties": {"expression": {"type": "string", "maxLength": 60}},
        "required": ["expression"],
    },
)

PROMPTS = [
    "Grade whether this result is relevant to 'python asyncio': 'asyncio runs coroutines concurrently.'",
    "Decide how to answer: 'What did the 2024 ViT survey conclude?'",
    "Plan how to write a short report on solar panels.",
    "Review this answer: 'The capital of France is Paris.'",
    "What is 17 * 23? Use a tool if it helps.",
]


@pytest.fixture(scope="module")
def model() -> LocalModel:
    loaded = get_model("local:smollm2")
    assert isinstance(loaded, LocalModel)
    return loaded


async def test_structured_output_is_schema_valid_100_of_100(model: LocalModel) -> None:
    review_schema = schema_for(Review)
    cases: list[tuple[str, dict[str, Any] | None, tuple[ToolSpec, ...]]] = [
        (PROMPTS[0], GRADE, ()),
        (PROMPTS[1], ROUTER, ()),
        (PROMPTS[2], PLAN, ()),
        (PROMPTS[3], review_schema, ()),
        (PROMPTS[4], None, (SEARCH, CALC)),
    ]
    valid = 0
    first_try = 0
    for trial in range(100):
        prompt, schema, tools = cases[trial % len(cases)]
        settings = ModelSettings(
            temperature=0.1 + 0.8 * (trial % 10) / 9, seed=trial, max_tokens=256
        )
        response = await model.complete(
            [Message.user(prompt)], settings, tools=tools, output_schema=schema
        )
        if tools:
            if response.tool_calls:
                call = response.tool_calls[0]
                spec = next(t for t in tools if t.name == call.name)
                assert schema_errors(call.arguments, spec.input_schema) == []
            else:
                assert response.text.strip()
        else:
            assert schema is not None
            assert schema_errors(response.parsed, schema) == []
            if schema is review_schema:
                assert isinstance(parse_output(Review, response), Review)
        valid += 1
        first_try += response.usage.requests == 1
    assert valid == 100
    print(f"\nstructured trials: {valid}/100 valid, {first_try}/100 valid on the first attempt")


async def test_tool_decision_calls_a_known_tool_with_valid_arguments(model: LocalModel) -> None:
    response = await model.complete(
        [Message.user("Search the web for the latest news about the James Webb telescope.")],
        ModelSettings(temperature=0.1, seed=3),
        tools=[SEARCH],
    )
    assert response.finish_reason in ("tool_calls", "stop")
    for call in response.tool_calls:
        assert call.name == "web_search"
        assert schema_errors(call.arguments, SEARCH.input_schema) == []
        assert call.id


async def test_streaming_yields_token_deltas_that_add_up(model: LocalModel) -> None:
    events = [
        e
        async for e in model.stream(
            [Message.user("Count from one to five in words.")],
            ModelSettings(max_tokens=24, temperature=0),
        )
    ]
    deltas = [e.delta for e in events if e.response is None]
    final = events[-1].response
    assert final is not None
    assert len(deltas) >= 5
    assert "".join(deltas) == final.text
    assert final.usage.output_tokens > 0 and final.usage.input_tokens > 0


async def test_streamed_structured_output_parses(model: LocalModel) -> None:
    events = [
        e
        async for e in model.stream(
            [Message.user(PROMPTS[1])], ModelSettings(seed=1), output_schema=ROUTER
        )
    ]
    final = events[-1].response
    assert final is not None
    assert schema_errors(final.parsed, ROUTER) == []
    assert len(events) > 2


async def test_closing_a_stream_cancels_generation(model: LocalModel) -> None:
    runtime = model.runtime
    before = runtime.cancelled_generations
    stream = model.stream(
        [Message.user("Write a long story about a lighthouse.")], ModelSettings(max_tokens=600)
    )
    first = await anext(stream)
    assert first.delta
    await stream.aclose()
    assert await asyncio.to_thread(
        runtime.wait_until, lambda: runtime.cancelled_generations > before, 30
    )
    assert runtime.cancelled_generations == before + 1
    after = await model.complete([Message.user("Say hi.")], ModelSettings(max_tokens=8))
    assert after.text


async def test_cancelling_a_completion_stops_the_worker(model: LocalModel) -> None:
    runtime = model.runtime
    before = runtime.cancelled_generations
    task = asyncio.create_task(
        model.complete(
            [Message.user("Write a long essay about rivers.")], ModelSettings(max_tokens=600)
        )
    )
    assert await asyncio.to_thread(runtime.wait_until, lambda: runtime.generating, 20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(
        runtime.wait_until, lambda: runtime.cancelled_generations > before, 30
    )
    assert runtime.cancelled_generations == before + 1


async def test_usage_counts_tokens_with_the_models_own_tokenizer(model: LocalModel) -> None:
    messages = [Message.user("Name a colour.")]
    response = await model.complete(messages, ModelSettings(max_tokens=8, temperature=0))
    assert response.usage.input_tokens == model.count_prompt_tokens(messages)
    assert model.count_tokens("hello world") == len(
        model.runtime.llm.tokenize(b"hello world", add_bos=False)
    )


def test_a_gguf_path_names_a_local_model_and_weights_load_once(model: LocalModel) -> None:
    path = bundled_model_path()
    by_path = get_model(f"local:{path}")
    assert isinstance(by_path, LocalModel)
    assert by_path.name == f"local:{path}"
    assert by_path.runtime is model.runtime


def test_a_missing_gguf_file_is_a_configuration_error(tmp_path: Any) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        get_model(f"local:{tmp_path / 'nope.gguf'}")


def test_a_grammar_llama_cpp_rejects_raises_instead_of_crashing(model: LocalModel) -> None:
    with pytest.raises(ModelError, match="cannot use the grammar"):
        model.runtime.check_grammar("root ::= missing-rule")


async def test_a_prompt_longer_than_the_context_is_refused_clearly() -> None:
    small = LocalModel(n_ctx=256)
    with pytest.raises(ModelError, match="context holds 256"):
        await small.complete([Message.user("word " * 400)])


def test_amx_is_read_from_the_cpu_flags_and_turns_extra_buffers_off(tmp_path: Any) -> None:
    from kforge.llm.local.runtime import _cpu_has_amx, _model_params

    with_amx = tmp_path / "amx"
    with_amx.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_bf16 amx_tile amx_int8\n")
    without = tmp_path / "plain"
    without.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f\n")
    assert _cpu_has_amx(str(with_amx)) is True
    assert _cpu_has_amx(str(without)) is False
    assert _cpu_has_amx(str(tmp_path / "missing")) is False
    pytest.importorskip("llama_cpp")
    import llama_cpp.llama_cpp as bindings

    with _model_params(extra_buffers=False):
        assert bindings.llama_model_default_params().use_extra_bufts is False
    assert bindings.llama_model_default_params().use_extra_bufts is True


async def test_the_same_prompt_samples_the_same_reply_in_every_process(model: LocalModel) -> None:
    # sampled, not greedy: the default seed makes it repeatable; another seed may differ
    prompt = [Message.user("Write one short sentence about rivers.")]
    warm = ModelSettings(temperature=0.9, max_tokens=24)
    first = await model.complete(prompt, warm)
    await model.complete([Message.user("Name a colour.")], warm)  # the cache holds another prompt
    again = await model.complete(prompt, warm)
    assert again.text == first.text
    seeded = [await model.complete(prompt, replace(warm, seed=seed)) for seed in (1, 2, 3, 4)]
    assert len({r.text for r in seeded}) > 1  # the seed, not greedy decoding, made it repeat


MEMORY_DOC = """# Agent memory

Agents keep three kinds of memory. Working memory holds the current task and the last few
steps. Episodic memory records past runs, so an agent can recall what worked before.
Semantic memory stores facts about the world, usually in a document index that the agent
searches before it answers.
"""


def test_the_same_research_twice_gives_the_same_run(tmp_path: Path) -> None:
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "memory.md").write_text(MEMORY_DOC)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    runs: list[list[tuple[str, str]]] = []
    for number, hash_seed in ((1, "1"), (2, "2")):  # set orders differ between the processes
        db = tmp_path / f"k{number}.db"
        done = subprocess.run(
            [sys.executable, "-m", "kforge", "--db", str(db), "research",
             "What kinds of memory do agents keep?", "--docs", str(docs), "--yes",
             "-o", str(tmp_path / f"r{number}.md"), "--model", "local:smollm2"],
            capture_output=True, text=True, env={**env, "PYTHONHASHSEED": hash_seed},
            cwd=tmp_path, timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        store = SQLiteStore(db)
        [run] = store.list_runs()
        runs.append([(f.type, _content(f)) for f in store.read_frames(run.id)])
        store.close()
    assert [t for t, _ in runs[0]] == [t for t, _ in runs[1]]
    sources = [[c for t, c in run if t == "data.source.found"] for run in runs]
    assert sources[0] and sources[0] == sources[1]
    assert runs[0] == runs[1]
    assert (tmp_path / "r1.md").read_text() == (tmp_path / "r2.md").read_text()


def _content(frame: Frame) -> str:
    """A frame's JSON without what differs by design (ids, times, durations, token counts)."""
    body = frame_to_dict(frame)
    for key in ("id", "run_id", "created_at", "duration_ms", "interaction_id"):
        body.pop(key, None)
    if isinstance(body.get("response"), dict):
        body["response"].pop("usage", None)
    return json.dumps(body, sort_keys=True)
