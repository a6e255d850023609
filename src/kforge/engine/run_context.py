"""RunContext: everything agent code may touch while a run executes.

Agents never see the store or the executor. They emit frames, call the model, call tools and
ask people through this object. It journals every effect, so when a step is re-executed after a
pause or a crash, recorded model responses, tool results and answers are returned from the log
instead of being requested again.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from kforge.engine.services import Services
from kforge.errors import (
    ModelOutputError,
    ModelUnavailableError,
    ReplayDivergenceError,
    ValidationError,
)
from kforge.frames import (
    DataEvent,
    Frame,
    InteractionAnswered,
    InteractionRequested,
    LimitWarning,
    ModelCall,
    TokenDelta,
    UsageFrame,
    frame_body_json,
    new_id,
    stamped,
    unstorable_field,
)
from kforge.jsoncodec import dumps, loads, not_json
from kforge.llm.base import Model
from kforge.llm.estimate import estimate_messages_tokens, estimate_text_tokens
from kforge.llm.prompt_delta import PromptLog
from kforge.llm.structured import parse_output, schema_for
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec, Usage
from kforge.memory.tokens import RunBudget

if TYPE_CHECKING:
    from kforge.engine.limits import RunLimits
    from kforge.rag.corpus import Corpus

__all__ = ["SUBAGENTS_REASON", "Answerer", "ModelOutage", "Parked", "RunContext", "Suspended"]

SUBAGENTS_REASON = "subagents"
"""The pause reason of a run parked until its child runs (waiting for a person) end."""

F = TypeVar("F", bound=Frame)
T = TypeVar("T")


class Suspended(BaseException):
    """Raised inside a step when the run must wait for a person.

    A BaseException so that agent code catching ``Exception`` cannot swallow it.
    """

    def __init__(self, request: InteractionRequested) -> None:
        super().__init__(request.prompt)
        self.request = request


class Parked(BaseException):
    """Raised inside a step when the run must wait for other runs (its subagents): the run is
    paused with ``reason`` and holds no worker; whoever finishes those runs resumes it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ModelOutage(BaseException):
    """Raised inside a step when the model cannot be reached (``ModelUnavailableError`` once its
    retries are spent): the run pauses before anything from that call is recorded.

    A BaseException so that no agent code catching ``Exception`` or ``ModelError`` (grading,
    rewriting, a guardrail, a fallback) can record the outage as a verdict on the documents.
    """

    def __init__(self, error: ModelUnavailableError) -> None:
        super().__init__(str(error))
        self.error = error


Answerer = Callable[[str, InteractionRequested], Awaitable[dict[str, Any] | None]]
"""Answers a question inline: ``(run_id, request) -> answer``; None leaves the run to park."""


class RunContext:
    """The run as agent code sees it."""

    def __init__(
        self,
        *,
        run_id: str,
        agent_type: str,
        model: Model,
        limits: RunLimits,
        next_seq: int,
        flush: Callable[[list[Frame]], None],
        usage: Usage | None = None,
        cost_usd: float | None = None,
        budget: RunBudget | None = None,
        services: Services | Mapping[str, Any] | None = None,
        on_delta: Callable[[TokenDelta], None] | None = None,
        answerer: Answerer | None = None,
        steering: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.run_id = run_id
        self.agent_type = agent_type
        self.model = model
        self.limits = limits
        self.usage = usage or Usage(0, 0, 0)
        """Tokens used by the whole run so far (all stretches)."""
        self.cost_usd = cost_usd
        """Dollars the run's calls cost so far; None while none of them had a price."""
        self.budget = budget or RunBudget(max_tokens=limits.max_tokens)
        """The token and cost limits each model call is checked against."""
        self.services: Services = Services.of(services)
        """Capabilities the runtime hands to agents: tools, corpora, memory, sessions, ..."""
        self.step = 0
        self._next_seq = next_seq
        self._flush = flush
        self._on_delta = on_delta
        self._answerer = answerer
        self._steering = steering
        self._pending: list[Frame] = []
        self._journal: list[Frame] = []
        self._cursor = 0
        self._replayed_ids: set[str] = set()
        self._prompts = PromptLog()

    # -- steps (called by the runner) ----------------------------------------------------

    def begin_step(self, step: int, journal: Sequence[Frame] = ()) -> None:
        """Start ``step``; ``journal`` holds the frames it already committed before it stopped."""
        self.step = step
        self._journal = list(journal)
        self._cursor = 0
        self._replayed_ids = set()

    def end_replay(self) -> None:
        """Drop what is left of the journal: the frames that follow are written, not matched."""
        self._journal = []
        self._cursor = 0

    def take_pending(self) -> list[Frame]:
        frames, self._pending = self._pending, []
        return frames

    def requeue(self, frames: Sequence[Frame]) -> None:
        """Put frames that were taken but not committed back in front of the pending ones."""
        self._pending[:0] = frames

    @property
    def replaying(self) -> bool:
        return self._cursor < len(self._journal)

    @property
    def last_seq(self) -> int:
        return self._next_seq - 1

    # -- frames ---------------------------------------------------------------------------

    def emit(self, frame: F) -> F:
        """Record ``frame`` in the run's log and return it with its run id and seq.

        While a step is being re-executed, a frame of the same type as the next recorded one
        is not written again: the recorded frame is returned instead.
        """
        if self.replaying:
            recorded = self._journal[self._cursor]
            if recorded.type != frame.type:
                raise ReplayDivergenceError(
                    f"run {self.run_id} step {self.step}: resumed code emitted '{frame.type}' "
                    f"where the log recorded '{recorded.type}' (seq {recorded.seq}); agent code "
                    "must be deterministic given recorded model responses, tool results and answers"
                )
            self._cursor += 1
            self._replayed_ids.add(recorded.id)
            return recorded  # type: ignore[return-value]
        frame = stamped(frame, self.run_id, self._next_seq)
        # encoded before it is queued: a frame the store could not take fails here, at the
        # step that made it, and neither the pending list nor the seq counter hold it
        try:
            frame_body_json(frame)
        except (TypeError, ValueError) as exc:
            raise ValidationError(
                f"run {self.run_id} step {self.step}: {unstorable_field(frame)}; frames must hold "
                "JSON values (dicts, lists, strings without lone surrogates, numbers, booleans, "
                "None)"
            ) from exc
        self._next_seq += 1
        self._pending.append(frame)
        return frame

    def replay_next(self, *types: type[F]) -> F | None:
        """While re-executing a step: consume and return the next recorded frame if it is one of
        ``types``; otherwise None."""
        if self.replaying:
            recorded = self._journal[self._cursor]
            if isinstance(recorded, types):
                self._cursor += 1
                self._replayed_ids.add(recorded.id)
                return recorded
        return None

    async def recorded(
        self, name: str, effect: Callable[[], Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
    ) -> dict[str, Any]:
        """The result of ``effect`` (a search, a clock, a file or store read: anything that is not
        a model or tool call), the same every time the step runs.

        The first execution runs ``effect`` and records its JSON object as the data event
        ``name``; a re-execution of the step returns the recorded object without running it.
        Both return what the record holds, so they read the same (tuples come back as lists).
        """
        if self.replaying:
            recorded = self._journal[self._cursor]
            if isinstance(recorded, DataEvent) and recorded.name == name:
                self._cursor += 1
                self._replayed_ids.add(recorded.id)
                return dict(recorded.payload)
        result = effect()
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, Mapping):
            raise ValidationError(
                f"recorded effect '{name}' returned a {type(result).__name__}; return a dict "
                "of JSON values so the step can be re-executed with what it saw"
            )
        found = not_json(dict(result))
        if found is not None:
            at = f" at {found[0]}" if found[0] else ""
            raise ValidationError(
                f"recorded effect '{name}' returned {found[1]}{at}, which JSON cannot record, "
                "so a re-executed step would see something else; return strings, finite "
                "numbers, booleans, null, lists and objects with string keys"
            )
        payload: dict[str, Any] = loads(dumps(result))
        return dict(self.emit(DataEvent(name=name, payload=payload)).payload)

    def recorded_next(self) -> Frame | None:
        """While re-executing a step: the next recorded frame, left in place; else None."""
        return self._journal[self._cursor] if self.replaying else None

    def was_replayed(self, frame: Frame) -> bool:
        """True when ``frame`` came from the log rather than from this execution."""
        return frame.id in self._replayed_ids

    def flush(self) -> None:
        """Commit the frames emitted so far (a durable point inside a step)."""
        if self._pending:
            frames = self.take_pending()
            try:
                self._flush(frames)
            except BaseException:
                self.requeue(frames)  # still the step's: its failure is committed after them
                raise

    def corpus(self, name: str | None = None) -> Corpus:
        """The document corpus ``name`` (default: ``kforge.rag.DEFAULT_CORPUS``); a
        ``ConfigurationError`` when the run was given no corpora."""
        return self.services.corpus(name)

    # -- model ----------------------------------------------------------------------------

    @overload
    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
        purpose: str = "",
        stream: bool = False,
        watch: Callable[[str], str | None] | None = None,
    ) -> ModelResponse: ...

    @overload
    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        output_type: type[T],
        purpose: str = "",
    ) -> T: ...

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
        output_type: type[T] | None = None,
        purpose: str = "",
        stream: bool = False,
        watch: Callable[[str], str | None] | None = None,
    ) -> ModelResponse | T:
        """Call the model once; the response is committed before this returns.

        With ``output_type`` (a pydantic model, or any type pydantic validates) the model is
        constrained to its JSON Schema and the validated value is returned; a reply that does
        not fit raises ``ModelOutputError`` (the response is recorded all the same, so a
        re-executed step fails alike). ``output_schema`` is the raw form, for schemas built at
        run time from tool specs.

        With ``stream=True`` the text reaches live subscribers as it is generated (token
        deltas, never stored); the recorded response is the same either way. ``watch`` sees
        the streamed text after each delta and may stop the generation by returning the text
        to keep (e.g. ``kforge.rag.textcheck.loop_watch()`` stops a reply that starts to
        loop); the response then has that text and the finish reason ``stopped``.
        """
        if output_type is not None:
            response = await self._complete(
                messages, settings, (), schema_for(output_type), purpose, False, None
            )
            return parse_output(output_type, response, purpose)
        return await self._complete(
            messages, settings, tools, output_schema, purpose, stream, watch
        )

    async def _complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None,
        tools: Sequence[ToolSpec],
        output_schema: dict[str, Any] | None,
        purpose: str,
        stream: bool,
        watch: Callable[[str], str | None] | None,
    ) -> ModelResponse:
        recorded = self.replay_next(ModelCall)
        if recorded is not None:
            self._prompts.replayed(
                purpose, recorded.seq, recorded.prompt_base, recorded.prompt_delta
            )
            usage_frame = self.replay_next(UsageFrame)
            replayed = ModelResponse.from_dict(recorded.response)
            # the state restored at the step boundary does not count calls made inside the step
            self.usage = self.usage + replayed.usage
            if usage_frame is not None and usage_frame.cost_usd is not None:
                self.cost_usd = (self.cost_usd or 0.0) + usage_frame.cost_usd
            while self.replay_next(LimitWarning) is not None:
                pass
            return replayed
        self.check_budget()
        started = time.perf_counter()
        try:
            if stream and self._on_delta is not None:
                try:
                    response = await self._streamed(
                        messages, settings, tools, output_schema, purpose, watch
                    )
                except NotImplementedError:  # a model that cannot stream answers whole
                    response = await self.model.complete(
                        messages, settings, tools=tools, output_schema=output_schema
                    )
            else:
                response = await self.model.complete(
                    messages, settings, tools=tools, output_schema=output_schema
                )
        except ModelUnavailableError as exc:
            raise ModelOutage(exc) from exc
        duration_ms = (time.perf_counter() - started) * 1000
        model = response.model or self.model.name
        before, cost_before = self.usage, self.cost_usd
        cost = self.budget.cost(model, response.usage)
        self.usage = self.usage + response.usage
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost
        self._refuse_unrecordable(response)
        base, delta = self._prompts.delta(purpose, messages)
        call = self.emit(
            ModelCall(
                model=model,
                response=response.to_dict(),
                purpose=purpose,
                duration_ms=round(duration_ms, 3),
                prompt_base=base,
                prompt_delta=delta,
            )
        )
        self.emit(
            UsageFrame(
                model=model,
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
                run_input_tokens=self.usage.input_tokens,
                run_output_tokens=self.usage.output_tokens,
                cost_usd=None if cost is None else round(cost, 8),
                run_cost_usd=None if self.cost_usd is None else round(self.cost_usd, 8),
            )
        )
        for limit, used, maximum in self.budget.crossed(
            before, cost_before, self.usage, self.cost_usd
        ):
            self.emit(LimitWarning(limit=limit, value=used, maximum=maximum))
        self.flush()
        self._prompts.sent(purpose, call.seq, messages)
        return response

    async def _streamed(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None,
        tools: Sequence[ToolSpec],
        output_schema: dict[str, Any] | None,
        purpose: str,
        watch: Callable[[str], str | None] | None = None,
    ) -> ModelResponse:
        assert self._on_delta is not None
        final: ModelResponse | None = None
        streamed: list[str] = []
        events = self.model.stream(messages, settings, tools=tools, output_schema=output_schema)
        try:
            async for event in events:
                if event.delta:
                    self._on_delta(TokenDelta(self.run_id, event.delta, purpose))
                    streamed.append(event.delta)
                    kept = watch("".join(streamed)) if watch is not None else None
                    if kept is not None:
                        return ModelResponse(
                            text=kept,
                            usage=Usage(
                                estimate_messages_tokens(messages), estimate_text_tokens(kept)
                            ),
                            model=self.model.name,
                            finish_reason="stopped",
                        )
                if event.response is not None:
                    final = event.response
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()  # stops the generation at once, not when it is collected
        if final is None:
            raise ModelOutputError(f"model {self.model.name} ended its stream without a response")
        return final

    def _refuse_unrecordable(self, response: ModelResponse) -> None:
        """A re-executed step must see the reply the first execution saw, so a reply holding
        what the record cannot keep as it is (NaN, infinities) is refused before it is used."""
        if not_json([[c.arguments for c in response.tool_calls], response.parsed]) is None:
            return
        problems: list[tuple[str, str]] = []
        for call in response.tool_calls:
            for name, value in call.arguments.items():
                found = not_json({name: value})
                if found is not None:
                    at = f" at {found[0]}" if found[0] != name else ""
                    problems.append((f"tool call '{call.name}', argument '{name}'{at}", found[1]))
        found = not_json(response.parsed)
        if found is not None:
            problems.append(
                ("structured output" + (f" at {found[0]}" if found[0] else ""), found[1])
            )
        if problems:
            where, what = problems[0]
            raise ModelOutputError(
                f"model {response.model or self.model.name} replied with {what} in {where}, "
                "which JSON cannot record, so a re-executed step would see something else; "
                "ask for a finite number, or for the value as a string"
            )

    def check_budget(self) -> None:
        """The hard stop: ``LimitExceededError`` (which pauses the run) once a token or cost
        limit is used up."""
        if self.budget.max_cost_usd is not None:
            self.budget.cost(self.model.name, Usage(0, 0, 0))  # no price: refused before a call
        self.budget.check(self.usage, self.cost_usd)

    # -- people ---------------------------------------------------------------------------

    async def steered(self) -> None:
        """Return once a person's intervention (delete, modify, comment) waits for this run;
        never, for a run that takes none. A step that waits on something slow (its subagents)
        races this and ends early when it wins: interventions are taken between steps, so the
        run takes it at once instead of when the wait is over."""
        if self._steering is None:
            await asyncio.Event().wait()
        else:
            await self._steering()

    async def ask(
        self,
        prompt: str,
        *,
        kind: str = "question",
        options: Sequence[str] = (),
        payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Ask a person and return their answer.

        The first time, this records the request and suspends the run (status
        ``awaiting_user``); the runtime's ``resume(run_id, answer)`` re-executes the step and
        this call then returns the recorded answer. A question (``kind="question"``) goes to
        the runtime's query-user handler first, when one is set: its answer is recorded the
        same way and the step goes on without pausing.
        """
        request = self.replay_next(InteractionRequested)
        if request is None:
            request = self.emit(
                InteractionRequested(
                    interaction_id=new_id(),
                    kind=kind,
                    prompt=prompt,
                    options=tuple(options),
                    payload=dict(payload or {}),
                )
            )
        else:
            answer = self.replay_next(InteractionAnswered)
            if answer is not None:
                return dict(answer.answer)
        if self._answerer is not None and kind == "question":
            self.flush()  # the question is on record (and visible) while the handler decides
            inline = await self._answerer(self.run_id, request)
            if inline is not None:
                self.emit(InteractionAnswered(interaction_id=request.interaction_id, answer=inline))
                self.flush()
                return dict(inline)
        raise Suspended(request)
