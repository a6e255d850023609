"""The journal's one way to run an effect: ``RunContext.step`` runs here.

On a first execution the effect runs and its record is written; when a step is re-executed
after a pause or a crash, the record next in the log is read back instead. What the record
is (a data event, a tool's call and result frames) comes from the ``Effect``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from kforge.effects import Effect
from kforge.frames import Frame

__all__ = ["Journal", "run_step"]

F = TypeVar("F", bound=Frame)


class Journal(Protocol):
    """What a step needs of the run (``RunContext``): its log, matched in order on replay."""

    def emit(self, frame: F) -> F:
        """Write ``frame``, or return the recorded one of its type while replaying."""
        ...

    def flush(self) -> None:
        """Commit what was written so far."""
        ...

    def _recorded_next(self) -> Frame | None: ...

    def _replay_next(self, *types: type[F]) -> F | None: ...


async def run_step(
    ctx: Journal,
    effect: Effect[Any],
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
) -> Any:
    """``fn(*args, **kwargs)`` journaled as ``effect`` says (see ``RunContext.step``)."""
    next_up = ctx._recorded_next()
    start: Frame | None = None
    resumed: Frame | None = None
    if effect.starts:
        start = args[0] if args else None
        if not isinstance(start, Frame):
            raise TypeError(
                f"effect '{effect.name}' starts with a frame: pass it as the first argument"
            )
        if effect.when is not None:
            if next_up is not None:
                if effect.earlier is not None and effect.earlier(next_up):
                    start = None  # an earlier version's log: the effect's own frames come next
                elif next_up.type != start.type:
                    return None  # the first execution decided against it here
            elif not effect.when():
                return None
        if start is not None:
            replaying = next_up is not None
            # on replay: the recorded start, or a divergence naming the seq
            start = ctx.emit(start)
            resumed = start if replaying else None
            next_up = ctx._recorded_next()
        args = (start, *args[1:])
    elif effect.when is not None:
        raise TypeError(f"effect '{effect.name}': 'when' needs a start frame to record")
    matches = effect.matches
    if next_up is not None and matches is not None and matches(next_up):
        assert effect.restore is not None
        return effect.restore(ctx._replay_next(Frame) or next_up)
    if resumed is not None and not effect.repeatable:
        # started, then the run stopped before its result was recorded: whether it took
        # effect is unknown, so it is not run blindly again
        assert effect.unknown is not None
        value = effect.unknown(resumed)
    else:
        if start is not None and not effect.repeatable:
            ctx.flush()  # the start is durable before the effect can happen
        value = fn(*args, **kwargs)
        if inspect.isawaitable(value):
            value = await value
    if effect.record is None:
        return value
    frame = ctx.emit(effect.record(value))
    if effect.durable:
        ctx.flush()
    if effect.reads_back:
        assert effect.restore is not None
        return effect.restore(frame)
    return value
