"""The local provider: a GGUF model run in-process by llama-cpp-python (default ``local:smollm2``).

Every structured reply (an output schema, or a decision among tools) is decoded under a grammar
built from its JSON Schema, so it always parses; it is then validated, and retried with the
problem explained when a rule the grammar cannot express was broken.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from kforge import jsoncodec
from kforge.errors import ConfigurationError, ModelOutputError, ModelUnavailableError
from kforge.extras import require_extra
from kforge.llm.config import AnswerStyle
from kforge.llm.local.decode import SamplingParams
from kforge.llm.local.grammar import schema_to_gbnf
from kforge.llm.local.runtime import (
    Generation,
    GenerationCancelled,
    LocalRuntime,
    bundled_model_path,
    runtime_for,
)
from kforge.llm.streaming import relay
from kforge.llm.structured import repair_message, schema_errors
from kforge.llm.toolprompt import (
    decision_schema,
    flatten_tool_messages,
    parse_tool_reply,
    tool_instructions,
)
from kforge.llm.types import Message, ModelResponse, ModelSettings, StreamEvent, ToolSpec, Usage

__all__ = ["BUNDLED_MODEL", "LocalModel"]

BUNDLED_MODEL = "smollm2"
DEFAULT_TEMPERATURE = 0.2
DEFAULT_TOP_P = 0.95
DEFAULT_MAX_TOKENS = 1024
RETRY_TEMPERATURE = 0.7
RETRY_REPEAT_PENALTY = 1.15
DEFAULT_SEED = 0
"""The sampling seed when the settings name none: the same prompt and settings give the same
reply in every process, so the same run can be made again."""


class LocalModel:
    """A ``Model`` backed by a GGUF file; the weights are shared by every instance in the process."""

    def __init__(
        self,
        model: str = BUNDLED_MODEL,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        structured_attempts: int = 3,
        answer_style: AnswerStyle = "extractive",
    ) -> None:
        if model == BUNDLED_MODEL:
            require_extra("local", f"the bundled model local:{BUNDLED_MODEL}")
            self._path: Path | None = None
        else:
            path = Path(model).expanduser()
            if not path.is_file():
                raise ConfigurationError(
                    f"local model file {path} does not exist; give the path of a .gguf file "
                    f"(local:/path/model.gguf) or use the bundled local:{BUNDLED_MODEL}"
                )
            require_extra("local", f"local model {path}", modules=("llama_cpp",))
            self._path = path
        self._model = model
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self.structured_attempts = max(1, structured_attempts)
        self.answer_style: AnswerStyle = answer_style
        """Answers from documents quote them by default: a 135M model's own prose loops."""

    @property
    def name(self) -> str:
        return f"local:{self._model}"

    @property
    def runtime(self) -> LocalRuntime:
        """The loaded model (loaded on first use, once per process)."""
        path = self._path or bundled_model_path()
        return runtime_for(path, n_ctx=self._n_ctx, n_threads=self._n_threads)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's own tokenizer."""
        return self.runtime.count_tokens(text)

    def count_prompt_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens of the chat as this model will see it, template included."""
        return len(self.runtime.prompt_tokens(_wire(messages)))

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        history, schema = self._plan(messages, tools, output_schema)
        generation = await self._generate(history, settings, schema, on_text=None, attempt=0)
        return await self._finish(history, settings, schema, tools, output_schema, generation)

    async def stream(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        history, schema = self._plan(messages, tools, output_schema)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def on_text(text: str) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, text)

        task = asyncio.ensure_future(
            self._generate(history, settings, schema, on_text=on_text, attempt=0)
        )
        try:
            async for delta in relay(queue, task):
                yield StreamEvent(delta=delta)
            generation = await task
            yield StreamEvent(
                response=await self._finish(
                    history, settings, schema, tools, output_schema, generation
                )
            )
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # -- internals --------------------------------------------------------------------------

    def _plan(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        output_schema: dict[str, Any] | None,
    ) -> tuple[list[Message], dict[str, Any] | None]:
        history = list(messages)
        if any(m.role == "tool" or m.tool_calls for m in history):
            history = flatten_tool_messages(history)
        if not tools:
            return history, output_schema
        schema = decision_schema(tools)
        if output_schema is not None:
            schema["anyOf"][-1]["properties"]["answer"] = output_schema
        instructions = tool_instructions(tools)
        if history and history[0].role == "system":
            history[0] = Message.system(f"{history[0].content}\n\n{instructions}")
        else:
            history.insert(0, Message.system(instructions))
        return history, schema

    async def _generate(
        self,
        history: Sequence[Message],
        settings: ModelSettings | None,
        schema: dict[str, Any] | None,
        *,
        on_text: Callable[[str], None] | None,
        attempt: int,
    ) -> Generation:
        s = settings or ModelSettings()
        max_tokens = (s.max_tokens or DEFAULT_MAX_TOKENS) * (2**attempt)
        seed = (DEFAULT_SEED if s.seed is None else s.seed) + attempt
        temperature = DEFAULT_TEMPERATURE if s.temperature is None else s.temperature
        penalty = s.repetition_penalty or 1.0
        if attempt > 0:
            # A retry at the same temperature would likely repeat the failure (at 0, exactly).
            temperature = max(temperature, RETRY_TEMPERATURE)
            penalty = max(penalty, RETRY_REPEAT_PENALTY)
        runtime = self.runtime
        cancel = threading.Event()
        loop = asyncio.get_running_loop()
        params = SamplingParams(
            max_tokens=max_tokens,
            temperature=temperature,
            top_p=DEFAULT_TOP_P if s.top_p is None else s.top_p,
            seed=seed,
            stop=tuple(s.stop),
            repeat_penalty=penalty,
        )
        grammar = schema_to_gbnf(schema) if schema is not None else None
        future = loop.run_in_executor(
            runtime.executor,
            lambda: runtime.generate(
                _wire(history), params, grammar=grammar, cancel=cancel, on_text=on_text
            ),
        )
        try:
            return await asyncio.wait_for(future, s.timeout_s)
        except TimeoutError as exc:
            raise ModelUnavailableError(
                f"{self.name} did not finish within {s.timeout_s} s; lower max_tokens or allow "
                "more time with ModelSettings(timeout_s=...)"
            ) from exc
        except GenerationCancelled as exc:
            raise asyncio.CancelledError() from exc
        finally:
            cancel.set()

    async def _finish(
        self,
        history: list[Message],
        settings: ModelSettings | None,
        schema: dict[str, Any] | None,
        tools: Sequence[ToolSpec],
        output_schema: dict[str, Any] | None,
        generation: Generation,
    ) -> ModelResponse:
        usage = Usage(generation.prompt_tokens, generation.completion_tokens)
        if schema is None:
            return self._response(generation.text, usage, generation.finish_reason)
        attempt = 0
        while True:
            problems = _problems(generation, schema)
            if not problems:
                value = jsoncodec.loads(generation.text)
                if not tools:
                    return self._response(
                        generation.text, usage, generation.finish_reason, parsed=value
                    )
                answer, calls = parse_tool_reply(
                    value, call_id_prefix=f"call_{uuid.uuid4().hex[:8]}"
                )
                if calls:
                    return ModelResponse(
                        tool_calls=calls, usage=usage, model=self.name, finish_reason="tool_calls"
                    )
                if output_schema is None:
                    return self._response(answer, usage, generation.finish_reason)
                parsed = value["answer"]
                return self._response(
                    jsoncodec.dumps(parsed, spaced=True),
                    usage,
                    generation.finish_reason,
                    parsed=parsed,
                )
            attempt += 1
            if attempt >= self.structured_attempts:
                raise ModelOutputError(
                    f"{self.name}: output did not match the schema after {attempt} attempts: "
                    f"{'; '.join(problems)}; last output: {generation.text[:300]!r}"
                )
            retry_history = [*history, Message.assistant(generation.text), repair_message(problems)]
            generation = await self._generate(
                retry_history, settings, schema, on_text=None, attempt=attempt
            )
            usage = usage + Usage(generation.prompt_tokens, generation.completion_tokens)

    def _response(
        self, text: str, usage: Usage, finish: str, *, parsed: Any = None
    ) -> ModelResponse:
        return ModelResponse(
            text=text, parsed=parsed, usage=usage, model=self.name, finish_reason=finish
        )


def _problems(generation: Generation, schema: dict[str, Any]) -> list[str]:
    try:
        value = jsoncodec.loads(generation.text)
    except jsoncodec.JSONDecodeError as exc:
        cut = " (the output hit max_tokens)" if generation.finish_reason == "length" else ""
        return [f"the output is not complete JSON{cut}: {exc.msg}"]
    return schema_errors(value, schema)


def _wire(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]
