"""Context compaction: older history is summarised so the context shrinks by at least 20 %.

The grounding section (goal, completed subtasks, key decisions, user preferences) is never
summarised or dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, TypeVar

from kforge.effects import Effect
from kforge.errors import ForgeError, ModelError, ScriptedModelError
from kforge.frames import Compaction, DataEvent, ErrorFrame, Frame, ModelCall
from kforge.llm.base import CompleteFn
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec
from kforge.memory.window import ContextEntry, ContextWindow, CountTokens
from kforge.prompts import prompt_text

__all__ = [
    "COMPACTION_PROMPT",
    "CompactionError",
    "CompactionMethod",
    "CompactionResult",
    "CompleteFn",
    "RunHandle",
    "compact_context",
    "compact_if_needed",
    "compact_in_run",
    "compaction_step",
    "journaled_complete",
]

_F = TypeVar("_F", bound=Frame)

_MIN_SUMMARY_TOKENS = 16
"""Below this room a model summary is not worth asking for; recent entries give way first."""

CompactionMethod = Literal["model", "extractive", "dropped"]

COMPACTION_PROMPT = prompt_text("CONTEXT_COMPACTION")


class RunHandle(Protocol):
    """The part of ``RunContext`` that memory uses: journaled model calls and frame emission."""

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
        purpose: str = "",
    ) -> ModelResponse: ...

    def emit(self, frame: _F) -> _F: ...


class CompactionError(ForgeError):
    """The context cannot shrink by 20 % without dropping its grounding section."""


@dataclass(frozen=True, slots=True)
class CompactionResult:
    context: ContextWindow
    """The compacted context; the input context is left unchanged."""
    tokens_before: int
    tokens_after: int
    entries_compacted: int
    """How many history entries were replaced by the summary (or dropped)."""
    summary: str
    method: CompactionMethod
    """``model`` summary, deterministic ``extractive`` summary, or history ``dropped``."""

    @property
    def reduction(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0

    def to_frame(self) -> Compaction:
        return Compaction(
            tokens_before=self.tokens_before,
            tokens_after=self.tokens_after,
            entries_compacted=self.entries_compacted,
            summary=self.summary,
        )


async def compact_context(
    window: ContextWindow,
    complete: CompleteFn | None,
    *,
    keep_recent: int = 2,
    max_summary_tokens: int = 1024,
    fit_within: int | None = None,
    settings: ModelSettings | None = None,
) -> CompactionResult:
    """Replace older history with a summary so that the context loses at least 20 % of its tokens.

    With ``fit_within``, the compacted context holds at most that many tokens too, as far as
    the grounding section allows. The newest ``keep_recent`` entries are kept verbatim when the
    budget allows. The summary has at most ``max_summary_tokens`` tokens. The model writes
    the summary; when it fails, answers with nothing, or answers with more than the budget, a
    deterministic extractive summary is used instead, and if even that cannot fit, the older
    entries are dropped. Pass ``complete=None`` to skip the model. Raises ``CompactionError``
    when the history is empty or the grounding section alone is over 80 % of the context.
    """
    before = window.token_count
    budget = before * 4 // 5  # tokens_after <= 80 % of tokens_before, in exact integers
    grounding = window.grounding_tokens
    history = window.history
    if not history:
        raise CompactionError(
            "context compaction: the history is empty, so there is nothing to compact; "
            "shorten the grounding section or use a model with a larger window"
        )
    if grounding > budget:
        raise CompactionError(
            f"context compaction: the grounding section alone takes {grounding} of the context's "
            f"{before} tokens, so removing 20 % would mean dropping it; shorten the goal, "
            "decisions or preferences, or use a model with a larger window"
        )
    if fit_within is not None:
        budget = min(budget, max(fit_within, grounding))
    keep = max(0, min(keep_recent, len(history) - 1))
    while keep > 0 and _room(window, grounding, budget, keep) < _MIN_SUMMARY_TOKENS:
        keep -= 1
    older, recent = history[: len(history) - keep], history[len(history) - keep :]
    limit = min(max_summary_tokens, _room(window, grounding, budget, keep))

    if complete is not None and limit >= _MIN_SUMMARY_TOKENS:
        summary = await _model_summary(window, older, complete, limit, settings)
        if summary:
            result = _assemble(window, before, older, recent, summary, "model")
            if result.tokens_after <= budget:
                return result
    summary = _fit(_extract(older), max(limit, 0), window.count_tokens)
    if summary:
        result = _assemble(window, before, older, recent, summary, "extractive")
        if result.tokens_after <= budget:
            return result
    # Fits: ``keep`` was chosen so that the grounding and the kept entries leave room >= 0.
    return _assemble(window, before, older, recent, "", "dropped")


async def compact_if_needed(
    window: ContextWindow,
    complete: CompleteFn | None,
    *,
    keep_recent: int = 2,
    settings: ModelSettings | None = None,
) -> CompactionResult | None:
    """Compact when the context is past its threshold (80 % of the window); otherwise None."""
    if not window.needs_compaction():
        return None
    return await compact_context(window, complete, keep_recent=keep_recent, settings=settings)


async def compact_in_run(
    run: RunHandle,
    window: ContextWindow,
    *,
    keep_recent: int = 2,
    max_summary_tokens: int = 1024,
    fit_within: int | None = None,
    settings: ModelSettings | None = None,
) -> CompactionResult:
    """Compact through the run's journaled model and emit the ``context.compaction`` frame."""
    complete = journaled_complete(run, "context.compaction")
    result = await compact_context(
        window,
        complete,
        keep_recent=keep_recent,
        max_summary_tokens=max_summary_tokens,
        fit_within=fit_within,
        settings=settings,
    )
    run.emit(result.to_frame())
    return result


COMPACTION_STARTED = "context.compaction.started"
"""The data event that records a compaction's start: a re-executed step compacts where its
first execution did, whatever the context holds by then."""


def compaction_step(window: ContextWindow, overhead: int = 0) -> tuple[Effect[Any], Frame]:
    """A compaction as a journaled step: ``ctx.step(effect, compact, start)`` with the effect
    and start frame returned here. It happens when the context (plus ``overhead`` tokens sent
    beside it) is past its threshold, and that decision is recorded by the start, since what
    fills the context (lessons from memory) may differ on replay. The compaction itself is
    re-executed from its recorded model call."""

    def due() -> bool:
        return bool(window.history) and window.needs_compaction(overhead)

    effect: Effect[Any] = Effect(
        name="context compaction",
        record=None,
        starts=True,
        when=due,
        earlier=_earlier_compaction,
    )
    start = DataEvent(
        name=COMPACTION_STARTED, payload={"tokens": window.token_count, "overhead": overhead}
    )
    return effect, start


def _earlier_compaction(frame: Frame) -> bool:
    """A compaction recorded before its start was: its model call, frame or error comes first."""
    return (
        isinstance(frame, Compaction)
        or (isinstance(frame, ModelCall) and frame.purpose == "context.compaction")
        or (isinstance(frame, ErrorFrame) and frame.error_type == "CompactionError")
    )


def journaled_complete(run: RunHandle, purpose: str) -> CompleteFn:
    """``run.complete`` as a ``CompleteFn`` whose model calls are recorded with ``purpose``."""

    async def complete(
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        return await run.complete(
            messages, settings, tools=tools, output_schema=output_schema, purpose=purpose
        )

    return complete


def _room(window: ContextWindow, grounding: int, budget: int, keep: int) -> int:
    recent = window.history[len(window.history) - keep :] if keep else []
    return budget - grounding - sum(e.token_count for e in recent)


async def _model_summary(
    window: ContextWindow,
    older: Sequence[ContextEntry],
    complete: CompleteFn,
    limit: int,
    settings: ModelSettings | None,
) -> str:
    words = max(1, limit * 3 // 4)
    request = prompt_text(
        "COMPACTION_REQUEST",
        grounding=window.grounding.render(),
        entries="\n".join(e.render() for e in older),
        words=words,
    )
    chosen = settings or ModelSettings(temperature=0.0)
    if chosen.max_tokens is None:
        chosen = replace(chosen, max_tokens=limit)
    try:
        response = await complete(
            [Message.system(COMPACTION_PROMPT), Message.user(request)], chosen
        )
    except ScriptedModelError:
        raise  # a mis-scripted test must fail, not be hidden by the fallback
    except ModelError:
        return ""
    summary = response.text.strip()
    if not summary or window.count_tokens(summary) > limit:
        return ""
    return summary


def _extract(older: Sequence[ContextEntry]) -> str:
    """One line per entry: its label and first sentence, at most 160 characters."""
    lines = []
    for entry in older:
        text = " ".join(entry.content.split())
        end = text.find(". ")
        first = text[: end + 1] if 0 <= end < 160 else text[:160]
        if len(first) < len(text):
            first = first.rstrip() + " …"
        label = f"{entry.kind}:{entry.name}" if entry.name else entry.kind
        lines.append(f"- [{label}] {first}")
    return "\n".join(lines)


def _fit(text: str, limit: int, count_tokens: CountTokens) -> str:
    """The longest prefix of ``text`` (marked with an ellipsis) that has at most ``limit`` tokens."""
    if not text or limit <= 0:
        return ""
    if count_tokens(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(text[:mid] + "…") <= limit:
            low = mid
        else:
            high = mid - 1
    if low == 0:
        return ""
    fitted = text[:low].rstrip() + "…"
    return fitted if count_tokens(fitted) <= limit else ""


def _assemble(
    window: ContextWindow,
    before: int,
    older: Sequence[ContextEntry],
    recent: Sequence[ContextEntry],
    summary: str,
    method: CompactionMethod,
) -> CompactionResult:
    history = list(recent)
    if summary:
        entry = ContextEntry(
            kind="summary",
            content=summary,
            token_count=window.count_tokens(summary),
            timestamp=older[-1].timestamp,
            compacted=True,
        )
        history.insert(0, entry)
    compacted = window.copy(history=history)
    return CompactionResult(
        context=compacted,
        tokens_before=before,
        tokens_after=compacted.token_count,
        entries_compacted=len(older),
        summary=summary,
        method=method,
    )
