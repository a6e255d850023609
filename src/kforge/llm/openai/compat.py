"""Models behind any OpenAI-compatible chat-completions endpoint, through the official SDK.

Covers OpenAI, Ollama, vLLM, the llama.cpp server, LM Studio and OpenRouter. Native tool calls
and ``json_schema`` response formats are used where the endpoint has them; an endpoint that
refuses them (HTTP 400 naming the feature) is switched to prompted tools and prompted JSON for
the life of the model object. Structured output is always validated and, when it breaks the
schema, repaired with a bounded number of follow-up calls.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kforge import jsoncodec
from kforge.errors import (
    ConfigurationError,
    ModelAuthError,
    ModelError,
    ModelNotFoundError,
    ModelOutputError,
    ModelResponseError,
    ModelUnavailableError,
)
from kforge.extras import require_extra
from kforge.llm.config import AnswerStyle, ProviderSettings
from kforge.llm.estimate import estimate_messages_tokens, estimate_text_tokens
from kforge.llm.openai.wire import (
    StreamAccumulator,
    WireReply,
    parse_completion,
    request_params,
    to_wire_messages,
    tool_to_wire,
)
from kforge.llm.retry import RetryPolicy, RetryState, Transient, parse_retry_after, retry_call
from kforge.llm.streaming import relay
from kforge.llm.structured import extract_json, json_instructions, repair_message, schema_errors
from kforge.llm.toolprompt import flatten_tool_messages, parse_tool_reply, tool_instructions
from kforge.llm.types import Message, ModelResponse, ModelSettings, StreamEvent, ToolSpec, Usage

__all__ = ["OpenAICompatibleModel"]

_RETRY_STATUSES = {408, 409, 425, 429}


@dataclass(frozen=True, slots=True)
class _Call:
    messages: tuple[Message, ...]
    settings: ModelSettings | None
    tools: tuple[ToolSpec, ...]
    schema: dict[str, Any] | None


class OpenAICompatibleModel:
    """A ``Model`` served by an OpenAI-compatible HTTP endpoint."""

    def __init__(
        self,
        model_id: str,
        settings: ProviderSettings,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        require_extra("openai", f"model '{settings.name}:{model_id}'")
        if not settings.base_url:
            raise ConfigurationError(
                f"provider '{settings.name}' needs a base URL: set KFORGE_BASE_URL, pass "
                f"base_url=..., or add base_url to [providers.{settings.name}] in the config file"
            )
        self._id = model_id
        self._settings = settings
        self.retry = retry or RetryPolicy(max_attempts=settings.max_attempts)
        self._sleep = sleep
        self.native_tools = settings.native_tools
        self.json_schema = settings.json_schema
        self.answer_style: AnswerStyle = settings.answer
        self.stream_usage = True
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def name(self) -> str:
        return f"{self._settings.name}:{self._id}"

    @property
    def base_url(self) -> str:
        return self._settings.base_url or ""

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self.name!r}, base_url={self.base_url!r})"

    # -- public API -------------------------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        call = _Call(tuple(messages), settings, tuple(tools), output_schema)
        reply = await self._request(call, list(call.messages), stream_to=None)
        return await self._finish(call, reply)

    async def stream(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        call = _Call(tuple(messages), settings, tuple(tools), output_schema)
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        task = asyncio.create_task(self._request(call, list(call.messages), stream_to=queue))
        try:
            async for delta in relay(queue, task):
                yield StreamEvent(delta=delta)
            reply = await task
            yield StreamEvent(response=await self._finish(call, reply))
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # -- one request, with retries and capability fallback ----------------------------------

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            import openai

            key = self._settings.api_key
            if key is None:
                if self._settings.needs_api_key:
                    names = " or ".join(("KFORGE_API_KEY", *self._settings.api_key_env))
                    raise ModelAuthError(f"no API key for {self.name}: set {names}")
                key = "no-key"  # keyless local servers ignore it; the SDK insists on a value
            client = openai.AsyncOpenAI(
                api_key=key, base_url=self.base_url, max_retries=0, timeout=self._settings.timeout_s
            )
            self._clients[loop] = client
        return client

    def _params(self, call: _Call, history: list[Message], *, stream: bool) -> dict[str, Any]:
        has_tool_turns = any(m.role == "tool" or m.tool_calls for m in history)
        messages = history
        extra: list[str] = []
        if call.tools and not self.native_tools:
            extra.append(tool_instructions(call.tools))
        if has_tool_turns and not self.native_tools:
            messages = flatten_tool_messages(messages)
        if call.schema is not None and not self.json_schema:
            extra.append(json_instructions(call.schema))
        if extra:
            messages = _with_system(messages, "\n\n".join(extra))
        params = request_params(self._id, call.settings)
        params["messages"] = to_wire_messages(messages)
        if call.tools and self.native_tools:
            params["tools"] = [tool_to_wire(t) for t in call.tools]
        if call.schema is not None and self.json_schema:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": call.schema, "strict": False},
            }
        if stream:
            params["stream"] = True
            if self.stream_usage:
                params["stream_options"] = {"include_usage": True}
        timeout = call.settings.timeout_s if call.settings else None
        params["timeout"] = timeout if timeout is not None else self._settings.timeout_s
        return params

    async def _request(
        self, call: _Call, history: list[Message], *, stream_to: asyncio.Queue[str | None] | None
    ) -> WireReply:
        import openai

        while True:
            params = self._params(call, history, stream=stream_to is not None)
            state = RetryState()
            try:
                if stream_to is None:
                    return await retry_call(
                        functools.partial(self._post, params),
                        policy=self.retry,
                        classify=_classify,
                        state=state,
                        sleep=self._sleep,
                    )
                return await self._post_stream(params, stream_to, state)
            except openai.BadRequestError as exc:
                if not self._drop_refused_feature(exc, params):
                    raise self._error(exc, params, state) from exc
            except (openai.OpenAIError, ValueError, ModelResponseError) as exc:
                raise self._error(exc, params, state) from exc

    async def _post(self, params: dict[str, Any]) -> WireReply:
        raw = await self._client().chat.completions.with_raw_response.create(**params)
        return parse_completion(jsoncodec.loads(raw.text), endpoint=self.base_url)

    async def _post_stream(
        self, params: dict[str, Any], queue: asyncio.Queue[str | None], state: RetryState
    ) -> WireReply:
        response = await retry_call(
            lambda: self._client().chat.completions.create(**params),
            policy=self.retry,
            classify=_classify,
            state=state,
            sleep=self._sleep,
        )
        accumulator = StreamAccumulator(self.base_url)
        try:
            async for chunk in response:
                delta = accumulator.feed(chunk.model_dump(warnings=False))
                if delta:
                    queue.put_nowait(delta)
        finally:
            close = getattr(response, "close", None)
            if close is not None:
                await close()
        queue.put_nowait(None)
        return accumulator.result()

    def _drop_refused_feature(self, exc: Exception, params: dict[str, Any]) -> bool:
        """Turn off the optional feature a 400 error complains about; False if none applies."""
        text = str(exc).lower()
        if "stream_options" in params and "stream_options" in text:
            self.stream_usage = False
        elif "response_format" in params and ("response_format" in text or "json_schema" in text):
            self.json_schema = False
        elif "tools" in params and "tool" in text:
            self.native_tools = False
        else:
            return False
        return True

    def _error(self, exc: Exception, params: dict[str, Any], state: RetryState) -> ModelError:
        import openai

        tries = f"{state.attempts} attempt{'s' if state.attempts != 1 else ''}"
        where = f"{self.name} at {self.base_url}"
        if isinstance(exc, ModelError):
            return type(exc)(f"{exc} ({tries})")
        if isinstance(exc, openai.APITimeoutError):
            return ModelUnavailableError(
                f"cannot reach {where}: no answer within {params.get('timeout')} s ({tries}); "
                "check the server or allow more time: kforge --timeout SECONDS, timeout_s in the "
                "config file, or ModelSettings(timeout_s=...)"
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return ModelUnavailableError(
                f"cannot reach {where}: {cause} ({tries}); is the server running and the base "
                "URL right?"
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _detail(exc)
            if status in (401, 403):
                names = " or ".join(("KFORGE_API_KEY", *self._settings.api_key_env))
                return ModelAuthError(
                    f"{where} rejected the credentials (HTTP {status}: {detail}); set a valid key "
                    f"in {names}"
                )
            if status == 404:
                return ModelNotFoundError(
                    f"{where} does not serve model '{self._id}' (HTTP 404: {detail}); check the "
                    "model name (kforge models lists what is configured) and that the base URL "
                    "ends in /v1"
                )
            if status in _RETRY_STATUSES or status >= 500:
                reason = state.gave_up or f"still failing after {tries}"
                return ModelUnavailableError(
                    f"cannot reach {where}: it answered HTTP {status} ({detail}); {reason}"
                )
            return ModelError(f"{where} refused the request (HTTP {status}: {detail})")
        if isinstance(exc, ValueError):
            return ModelResponseError(
                f"{where} answered with malformed JSON ({exc}; {tries}); check that the base URL "
                "points at an OpenAI-compatible API"
            )
        return ModelError(f"{where} failed: {exc} ({tries})")

    # -- turning replies into responses -----------------------------------------------------

    async def _finish(self, call: _Call, reply: WireReply) -> ModelResponse:
        """Interpret ``reply``; repair tool calls or structured output with follow-up calls."""
        history = list(call.messages)
        usage = self._usage(history, reply)
        for attempt in range(self._settings.repair_attempts + 1):
            problem, response = self._interpret(call, reply)
            if problem is None:
                return _with_usage(response, usage, self.name)
            if attempt == self._settings.repair_attempts:
                raise ModelOutputError(
                    f"{self.name}: {problem}, still after {attempt} repair attempt"
                    f"{'s' if attempt != 1 else ''}; last reply: {reply.text[:300]!r}"
                )
            history += [Message.assistant(reply.text), repair_message(problem)]
            reply = await self._request(call, history, stream_to=None)
            usage = usage + self._usage(history, reply)
        raise AssertionError("unreachable")

    def _interpret(self, call: _Call, reply: WireReply) -> tuple[str | None, ModelResponse]:
        text, tool_calls = reply.text, list(reply.tool_calls)
        if reply.bad_arguments:
            return str(reply.bad_arguments[0]), ModelResponse()
        if call.tools and not self.native_tools and not tool_calls:
            try:
                value = extract_json(text)
            except ValueError:
                value = None
            if isinstance(value, dict) and (
                {"tool", "name", "tool_calls", "answer"} & value.keys()
            ):
                try:
                    text, calls = parse_tool_reply(value)
                except (ValueError, jsoncodec.JSONDecodeError) as exc:
                    return str(exc), ModelResponse()
                tool_calls = list(calls)
        known = {t.name for t in call.tools}
        for tc in tool_calls:
            if tc.name not in known:
                return (
                    f"there is no tool named '{tc.name}' (tools: {', '.join(sorted(known))})",
                    ModelResponse(),
                )
        parsed: Any = None
        if call.schema is not None and not tool_calls:
            try:
                parsed = extract_json(text)
            except ValueError as exc:
                return str(exc), ModelResponse()
            problems = schema_errors(parsed, call.schema)
            if problems:
                return "the JSON does not match the schema " + "; ".join(problems), ModelResponse()
        finish = "tool_calls" if tool_calls else reply.finish_reason
        return None, ModelResponse(
            text=text, tool_calls=tuple(tool_calls), parsed=parsed, finish_reason=finish
        )

    def _usage(self, history: Sequence[Message], reply: WireReply) -> Usage:
        if reply.usage is not None:
            return reply.usage
        output = estimate_text_tokens(reply.text) + sum(
            estimate_text_tokens(jsoncodec.dumps(c.arguments, spaced=True))
            for c in reply.tool_calls
        )
        return Usage(estimate_messages_tokens(history), output)


def _with_system(messages: list[Message], text: str) -> list[Message]:
    if messages and messages[0].role == "system":
        return [Message.system(f"{messages[0].content}\n\n{text}"), *messages[1:]]
    return [Message.system(text), *messages]


def _with_usage(response: ModelResponse, usage: Usage, name: str) -> ModelResponse:
    return ModelResponse(
        text=response.text,
        tool_calls=response.tool_calls,
        parsed=response.parsed,
        usage=usage,
        model=name,
        finish_reason=response.finish_reason,
    )


def _detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(getattr(exc, "message", exc))[:300]


def _classify(exc: Exception) -> Transient | None:
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status in _RETRY_STATUSES or status >= 500:
            return Transient(f"HTTP {status}", parse_retry_after(dict(exc.response.headers)))
        return None
    if isinstance(exc, openai.APITimeoutError):
        return Transient("timeout")
    if isinstance(exc, openai.APIConnectionError):
        return Transient("connection error")
    if isinstance(exc, (ValueError, ModelResponseError)):
        return Transient("malformed response")
    return None
