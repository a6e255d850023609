"""Event bus: committed frames, and streamed model text, fan out to live subscribers.

Frames committed here are published directly. Over a store that announces commits (PostgreSQL's
LISTEN/NOTIFY), a commit made by another process wakes the run's subscribers, which read the new
frames from the store: the same frames, in the same order, wherever the run executes.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable

from kforge.frames import Frame, TokenDelta

__all__ = ["EventBus", "Listen"]

Listen = Callable[[Callable[[str | None, int], None]], Callable[[], None]]
"""Starts calling back ``(run_id, last_seq)`` for commits of any process; returns its stop."""


class EventBus:
    def __init__(self, listen: Listen | None = None) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[Frame | TokenDelta | None]]] = defaultdict(
            set
        )
        self._listen = listen
        self._stop_listening: Callable[[], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._published: dict[str, int] = {}
        """The last seq published here, per watched run (a notice of it needs no store read)."""

    @property
    def crosses_processes(self) -> bool:
        """Whether commits of other processes reach the subscribers here."""
        return self._listen is not None

    def subscribe(
        self, run_id: str, *, listen: bool = True
    ) -> asyncio.Queue[Frame | TokenDelta | None]:
        """A queue of the run's frames as they are published here; with ``listen`` (and a store
        that announces commits) other processes' commits wake it too, from now on. A subscriber
        to a run that this process executes needs no listening until it stops doing so."""
        queue: asyncio.Queue[Frame | TokenDelta | None] = asyncio.Queue()
        self._subscribers[run_id].add(queue)
        if listen:
            self.listen()
        return queue

    def listen(self) -> None:
        """Start listening to other processes' commits, if the store announces them and this
        bus does not listen yet. Call it before reading the store: no commit falls in between."""
        if self._listen is not None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
            if self._stop_listening is None:
                self._stop_listening = self._listen(self._from_listener)

    def unsubscribe(self, run_id: str, queue: asyncio.Queue[Frame | TokenDelta | None]) -> None:
        subs = self._subscribers.get(run_id)
        if subs is not None:
            subs.discard(queue)
            if not subs:
                del self._subscribers[run_id]
                self._published.pop(run_id, None)

    def publish(self, run_id: str, frames: list[Frame]) -> None:
        queues = self._subscribers.get(run_id, ())
        if queues and frames:
            self._published[run_id] = frames[-1].seq
        for queue in queues:
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

    def notice(self, run_id: str | None, seq: int) -> None:
        """Some process committed the run's frames up to ``seq``: wake its subscribers unless
        they were given them here. ``run_id=None`` wakes every subscriber."""
        if run_id is None:
            for watched in list(self._subscribers):
                self.idle(watched)
        elif seq > self._published.get(run_id, 0):
            self.idle(run_id)

    def _from_listener(self, run_id: str | None, seq: int) -> None:
        loop = self._loop
        if (
            loop is None
            or loop.is_closed()
            or (run_id is not None and run_id not in self._subscribers)
        ):
            return
        try:
            loop.call_soon_threadsafe(self.notice, run_id, seq)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def close(self) -> None:
        """Stop listening to other processes' commits."""
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None
