"""Frames as Server-Sent Events: the event id is the frame's seq, the event name its type."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from kforge import jsoncodec
from kforge.frames import Frame, TokenDelta, frame_to_dict
from kforge.server.problems import Problem
from kforge.server.state import ServerState
from kforge.server.streams import RunProgress

__all__ = ["MAX_SEQ", "checked_seq", "counted_stream", "last_event_seq", "run_event_stream"]

MAX_SEQ = 2**63 - 1
"""The largest seq a store can hold (a signed 64-bit integer); no frame lies beyond it."""


def checked_seq(seq: int, name: str) -> int:
    """``seq`` if a store can compare with it, else a 400 problem naming ``name``."""
    if seq > MAX_SEQ:
        raise Problem(
            400,
            "invalid-seq",
            f"{name} {seq} is past the largest seq a run can have ({MAX_SEQ}); give the seq "
            "of the last frame received (its event id), or 0 for all frames",
        )
    return seq


def last_event_seq(request: Request, after_seq: int) -> int:
    """Where to resume: the ``Last-Event-ID`` header (a reconnecting client) over ``after_seq``."""
    header = request.headers.get("last-event-id")
    if header is None or not header.strip():
        return after_seq
    try:
        seq = int(header)
    except ValueError:
        raise Problem(
            400,
            "invalid-last-event-id",
            f"Last-Event-ID must be the seq of the last frame received, an integer (got "
            f"{header[:40]!r})",
        ) from None
    if seq < 0:
        raise Problem(400, "invalid-last-event-id", "Last-Event-ID must not be negative")
    return checked_seq(seq, "Last-Event-ID")


def _dumps(data: dict[str, Any]) -> str:
    return jsoncodec.dumps(data)


def run_event_stream(
    state: ServerState, request: Request, run_id: str, after_seq: int, *, deltas: bool
) -> EventSourceResponse:
    async def events() -> AsyncIterator[ServerSentEvent | bytes]:
        yield ServerSentEvent(retry=1000, comment="kforge run stream")
        events = state.streams.events(run_id, after_seq=after_seq, deltas=deltas, progress=True)
        async for item in events:
            if isinstance(item, TokenDelta):
                yield ServerSentEvent(
                    _dumps({"text": item.text, "purpose": item.purpose}), event=item.type
                )
            elif isinstance(item, RunProgress):
                yield ServerSentEvent(_dumps(item.to_json()), event="status")
            else:
                yield state.streams.encoded(item, _frame_event)
        run = state.runtime.get_run(run_id)
        yield ServerSentEvent(
            _dumps({"run_id": run_id, "status": run.status.value, "last_seq": run.last_seq}),
            event="end",
        )

    return counted_stream(state, request, events())


class _CountedStream(EventSourceResponse):
    """An SSE response that holds one of its client's stream slots until it is done, however
    it ends (even when the client goes before the first event)."""

    def __init__(self, content: Any, end: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._end = end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._end()


def counted_stream(
    state: ServerState, request: Request, events: AsyncIterator[ServerSentEvent | bytes]
) -> EventSourceResponse:
    """``events`` as an SSE response, counted against the client's bound (429 past it)."""
    client = request.client.host if request.client else "?"
    end = state.streams.admit(client)
    return _CountedStream(
        events,
        end,
        ping=state.settings.stream_ping_s,
        send_timeout=state.settings.stream_send_timeout_s,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _frame_event(frame: Frame) -> bytes:
    event = ServerSentEvent(_dumps(frame_to_dict(frame)), event=frame.type, id=str(frame.seq))
    return event.encode()
