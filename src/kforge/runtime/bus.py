"""In-process event bus: committed frames, and streamed model text, fan out to live subscribers."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from kforge.frames import Frame, TokenDelta

__all__ = ["EventBus"]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[Frame | TokenDelta | None]]] = defaultdict(
            set
        )

    def subscribe(self, run_id: str) -> asyncio.Queue[Frame | TokenDelta | None]:
        queue: asyncio.Queue[Frame | TokenDelta | None] = asyncio.Queue()
        self._subscribers[run_id].add(queue)
        return queue

    def unsubscribe(self, run_id: str, queue: asyncio.Queue[Frame | TokenDelta | None]) -> None:
        subs = self._subscribers.get(run_id)
        if subs is not None:
            subs.discard(queue)
            if not subs:
                del self._subscribers[run_id]

    def publish(self, run_id: str, frames: list[Frame]) -> None:
        for queue in self._subscribers.get(run_id, ()):
            for frame in frames:
                queue.put_nowait(frame)

    def publish_delta(self, delta: TokenDelta) -> None:
        """Model text as it is generated; only subscribers present now ever see it."""
        for queue in self._subscribers.get(delta.run_id, ()):
            queue.put_nowait(delta)

    def idle(self, run_id: str) -> None:
        """The run's stretch ended: wake subscribers so they can check its status."""
        for queue in self._subscribers.get(run_id, ()):
            queue.put_nowait(None)
