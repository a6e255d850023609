"""RunContext: everything agent code may touch while a run executes.

Agents never see the store or the executor. They emit frames, call the model, call tools and
ask people through this object. It journals every effect, so when a step is re-executed after a
pause or a crash, recorded model responses, tool results and answers are returned from the log
instead of being requested again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from kforge import jsoncodec
from kforge.effects import Effect, data_step
from kforge.engine.append_only import AppendOnlyList
from kforge.engine.model_calls import refuse_unrecordable, streamed
from kforge.engine.pauses import SUBAGENTS_REASON, Answerer, ModelOutage, Parked, Suspended
from kforge.engine.services import Services
from kforge.engine.steps import run_step
from kforge.errors import (
    ModelUnavailableError,
    ReplayDivergenceError,
    ValidationError,
)
from kforge.frames import (
    Frame,
    InteractionAnswered,
    InteractionRequested,
    LimitWarning,
    ModelCall,
    TokenDelta,
    UsageFrame,
    frame_body_json,
    new_id,
    stamp_made,
    stamped,
    unstorable_field,
)
from kforge.llm.base import Model
from kforge.llm.prompt_delta import PromptLog
from kforge.llm.structured import parse_output, schema_for
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec, Usage
from kforge.memory.tokens import RunBudget

if TYPE_CHECKING:
    from kforge.engine.limits import RunLimits
    from kforge.rag.corpus import Corpus

__all__ = ["SUBAGENTS_REASON", "Answerer", "ModelOutage", "Parked", "RunContext", "Suspended"]

F = TypeVar("F", bound=Frame)
T = TypeVar("T")
P = ParamSpec("P")


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
        flush_repeatable: Callable[[list[Frame]], None] | None = None,
        usage: Usage | None = None,
        cost_usd: float | None = None,
        budget: RunBudget | None = None,
        services: Services | None = None,
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
        self.step_number = 0
        """The step being executed (1 for the first)."""
        self._next_seq = next_seq
        self._flush = flush
        self._flush_repeatable = flush_repeatable or flush
        self._on_delta = on_delta
        self._answerer = answerer
        self._steering = steering
        self._pending: list[Frame] = []
        self._journal: list[Frame] = []
        self._cursor = 0
        self._prompts = PromptLog()

    # -- steps (called by the runner) ----------------------------------------------------

    def begin_step(self, step: int, journal: Sequence[Frame] = ()) -> None:
        """Start ``step``; ``journal`` holds the frames it already committed before it stopped."""
        self.step_number = step
        self._journal = list(journal)
        self._cursor = 0

    def restored_history(
        self, step: int, lists: Sequence[tuple[Sequence[str | int], Sequence[Any]]]
    ) -> None:
        """The lists of records this stretch restored from the state after ``step``: a model
        call that sends them again records copies of them (``PromptLog.restored``)."""
        self._prompts.restored(step, lists)

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
    def last_seq(self) -> int:
        return self._next_seq - 1

    # -- frames ---------------------------------------------------------------------------

    def emit(self, frame: F) -> F:
        """Record ``frame`` in the run's log and return it with its run id and seq.

        While a step is being re-executed, a frame of the same type as the next recorded one
        is not written again: the recorded frame is returned instead.
        """
        if self._cursor < len(self._journal):
            recorded = self._journal[self._cursor]
            if recorded.type != frame.type:
                raise ReplayDivergenceError(
                    f"run {self.run_id} step {self.step_number}: resumed code emitted '{frame.type}' "
                    f"where the log recorded '{recorded.type}' (seq {recorded.seq}); agent code "
                    "must be deterministic given recorded model responses, tool results and answers"
                )
            self._cursor += 1
            return recorded  # type: ignore[return-value]
        return self._queued(stamped(frame, self.run_id, self._next_seq))

    def _emit_made(self, frame: F) -> F:
        """``emit`` for a frame this context has just built and holds alone (a model call's
        record): stamped in place, not copied."""
        if self._cursor < len(self._journal):
            return self.emit(frame)
        return self._queued(stamp_made(frame, self.run_id, self._next_seq))

    def _queued(self, frame: F) -> F:
        """Queue ``frame``, stamped with the next seq, for the next commit."""
        # encoded before it is queued: a frame the store could not take fails here, at the
        # step that made it, and neither the pending list nor the seq counter hold it
        try:
            frame_body_json(frame)
        except (TypeError, ValueError) as exc:
            raise ValidationError(
                f"run {self.run_id} step {self.step_number}: {unstorable_field(frame)}; frames must hold "
                "JSON values (dicts, lists, strings without lone surrogates, numbers, booleans, "
                "None)"
            ) from exc
        self._next_seq += 1
        self._pending.append(frame)
        return frame

    def _replay_next(self, *types: type[F]) -> F | None:
        """While re-executing a step: consume and return the next recorded frame if it is one of
        ``types``; otherwise None."""
        if self._cursor < len(self._journal):
            recorded = self._journal[self._cursor]
            if isinstance(recorded, types):
                self._cursor += 1
                return recorded
        return None

    @overload
    def step(
        self, effect: str, fn: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs
    ) -> Coroutine[Any, Any, T]: ...

    @overload
    def step(
        self, effect: str, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> Coroutine[Any, Any, T]: ...

    @overload
    def step(
        self,
        effect: Effect[T],
        fn: Callable[..., Awaitable[T] | T],
        /,
        *args: Any,
        **kwargs: Any,
    ) -> Coroutine[Any, Any, T | None]: ...

    def step(
        self, effect: str | Effect[Any], fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> Coroutine[Any, Any, Any]:
        """``fn(*args, **kwargs)``, run once: a re-executed step gets the recorded value back.

        Every effect that is not a model call (a search, a clock, a file or store read or
        write, a tool call) goes through here, so a step re-executed after a pause or a crash
        sees what its first execution saw. ``fn`` may be sync or async. With a name, the
        value must be JSON (dicts, lists, strings, finite numbers, booleans, None); it is
        recorded as the data event ``name``, committed before this returns, and read back
        from the record both times (a tuple comes back as a list). An ``Effect`` says how
        another kind of effect is recorded (``kforge.effects``).

        An exception from ``fn`` is not recorded: it propagates as it is and a re-executed
        step runs ``fn`` again. Return a failure as a value to make it part of the record.
        Steps must come in the same order each time: a re-executed step that takes another
        step (or another effect) where the log recorded one raises ``ReplayDivergenceError``
        naming the seq.
        """
        # the coroutine of run_step itself, not one wrapping it: a tool call pays for no extra frame
        return run_step(
            self, data_step(effect) if isinstance(effect, str) else effect, fn, args, kwargs
        )

    def _recorded_next(self) -> Frame | None:
        """While re-executing a step: the next recorded frame, left in place; else None."""
        return self._journal[self._cursor] if self._cursor < len(self._journal) else None

    def flush(self, *, repeatable: bool = False) -> None:
        """Commit the frames emitted so far (a durable point inside a step). ``repeatable``:
        they record work a re-executed step may do again (a model's reply), so the commit need
        not wait for the disk (``RunLog.commit``)."""
        if self._pending:
            frames = self.take_pending()
            try:
                (self._flush_repeatable if repeatable else self._flush)(frames)
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
        recorded = self._replay_next(ModelCall)
        if recorded is not None:
            self._prompts.replayed(
                purpose,
                recorded.seq,
                recorded.prompt_base,
                recorded.prompt_delta,
                recorded.prompt_state,
            )
            usage_frame = self._replay_next(UsageFrame)
            replayed = jsoncodec.convert(recorded.response, ModelResponse)
            # the state restored at the step boundary does not count calls made inside the step
            self.usage = self.usage + replayed.usage
            if usage_frame is not None and usage_frame.cost_usd is not None:
                self.cost_usd = (self.cost_usd or 0.0) + usage_frame.cost_usd
            while self._replay_next(LimitWarning) is not None:
                pass
            return replayed
        self.check_budget()
        started = time.perf_counter()
        try:
            if stream and self._on_delta is not None:
                try:
                    response = await streamed(
                        self.model,
                        self._on_delta,
                        self.run_id,
                        messages,
                        settings,
                        tools,
                        output_schema,
                        purpose,
                        watch,
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
        refuse_unrecordable(self.model, response)
        base, delta, restored = self._prompts.delta(purpose, messages)
        call = self._emit_made(
            ModelCall(
                model=model,
                response=response.to_dict(),
                purpose=purpose,
                duration_ms=round(duration_ms, 3),
                prompt_base=base,
                prompt_delta=delta,
                prompt_state=restored,
            )
        )
        self._emit_made(
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
        self.flush(repeatable=True)
        self._prompts.sent(purpose, call.seq, messages, grows=type(messages) is AppendOnlyList)
        return response

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
        request = self._replay_next(InteractionRequested)
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
            answer = self._replay_next(InteractionAnswered)
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
