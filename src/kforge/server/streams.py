"""Live frames of a run for SSE clients: one bus subscription per watched run, fanned out to a
bounded mailbox per client; a client that falls behind catches up from the store, so a slow or
vanished client never holds a run back and never misses or repeats a frame."""

from __future__ import annotations

import asyncio
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from kforge.frames import Frame, StatusChanged, TokenDelta
from kforge.runtime.runtime import Runtime
from kforge.server.problems import Problem
from kforge.store.base import TERMINAL_STATUSES, RunRecord, RunStatus

__all__ = ["RunProgress", "RunStreams"]

_TERMINAL = frozenset(s.value for s in TERMINAL_STATUSES)
_PAGE = 500
_ENCODED_KEPT = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class RunProgress:
    """Where a run stands, sent whenever its status, step or question changes (so a client
    sees a run pause at a limit, wait for an answer, or take a step, without asking)."""

    run_id: str
    status: str
    steps: int
    max_steps: int | None
    pause_reason: str | None
    interaction_id: str | None
    """The question the run waits on, if any."""
    last_seq: int

    @classmethod
    def of(cls, run: RunRecord) -> RunProgress:
        pending = run.pending_interaction or {}
        return cls(
            run_id=run.id,
            status=run.status.value,
            steps=run.iteration,
            max_steps=run.max_iterations,
            pause_reason=run.pause_reason,
            interaction_id=pending.get("interaction_id"),
            last_seq=run.last_seq,
        )

    def changed_from(self, other: RunProgress | None) -> bool:
        """Whether this says something ``other`` did not (a new frame alone does not)."""
        return other is None or replace(self, last_seq=0) != replace(other, last_seq=0)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_Item = Frame | TokenDelta | RunProgress | None


class _Mailbox:
    """What the bus published for one client since it last looked, up to ``capacity`` items."""

    def __init__(self, capacity: int, *, progress: bool = False) -> None:
        self.capacity = capacity
        self.progress = progress
        """Whether the client wants ``RunProgress`` after each batch of frames."""
        self.items: deque[_Item] = deque()
        self.overflowed = False
        self.ready = asyncio.Event()

    def put(self, item: _Item) -> None:
        if len(self.items) >= self.capacity:
            # Frames are in the store: drop what is held and let the client read them there.
            self.items.clear()
            self.overflowed = True
        self.items.append(item)
        self.ready.set()

    async def take(self, timeout: float) -> tuple[list[_Item], bool] | None:
        """What arrived (and whether some was dropped), or None after ``timeout`` s of quiet."""
        if not self.ready.is_set():
            try:
                async with asyncio.timeout(timeout):
                    await self.ready.wait()
            except TimeoutError:
                return None
        self.ready.clear()
        items, overflowed = list(self.items), self.overflowed
        self.items.clear()
        self.overflowed = False
        return items, overflowed


class _Pump:
    """Copies one run's bus events into every mailbox watching it, each batch of frames
    followed by the run's progress for the mailboxes that want it (read once for all)."""

    def __init__(self, runtime: Runtime, run_id: str) -> None:
        self.mailboxes: set[_Mailbox] = set()
        self._store = runtime.store
        self._run_id = run_id
        self._queue = runtime.bus.subscribe(run_id)
        self._task = asyncio.get_running_loop().create_task(self._copy(), name=f"sse-{run_id}")

    async def _copy(self) -> None:
        while True:
            items: list[_Item] = [await self._queue.get()]
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            progress = self._progress(items)
            for mailbox in self.mailboxes:
                for item in items:
                    mailbox.put(item)
                if progress is not None and mailbox.progress:
                    mailbox.put(progress)

    def _progress(self, items: list[_Item]) -> RunProgress | None:
        if not any(m.progress for m in self.mailboxes):
            return None
        if not any(isinstance(item, Frame) for item in items):
            return None
        try:
            return RunProgress.of(self._store.get_run(self._run_id))
        except Exception:
            # the frames still go out; a client that waits for progress reads it from the
            # store when it next catches up there
            return None

    def stop(self, runtime: Runtime, run_id: str) -> None:
        self._task.cancel()
        runtime.bus.unsubscribe(run_id, self._queue)


class RunStreams:
    """Frames of a run after a seq, then live ones, until the run ends."""

    def __init__(
        self, runtime: Runtime, *, buffer: int, per_client: int, poll_s: float = 2.0
    ) -> None:
        self.runtime = runtime
        self.poll_s = poll_s
        self.buffer = buffer
        self.per_client = per_client
        self._pumps: dict[str, _Pump] = {}
        self._encoded: OrderedDict[tuple[str, int, str], bytes] = OrderedDict()
        self._clients: Counter[str] = Counter()

    @property
    def open_streams(self) -> int:
        return sum(self._clients.values())

    def admit(self, client: str) -> Callable[[], None]:
        """Count a new stream of ``client``, refused past the per-client bound; returns what
        ends the count (idempotent). Checked and counted in one synchronous step, so no burst
        of connections can slip in between the check and the count."""
        if self._clients[client] >= self.per_client:
            raise Problem(
                429,
                "too-many-streams",
                f"this client already holds {self.per_client} open streams; close one (or "
                "stream the agent tree instead of each run) before opening another",
            )
        self._clients[client] += 1
        ended = False

        def end() -> None:
            nonlocal ended
            if ended:
                return
            ended = True
            self._clients[client] -= 1
            if self._clients[client] <= 0:
                del self._clients[client]

        return end

    def encoded(self, frame: Frame, encode: Callable[[Frame], bytes]) -> bytes:
        """``encode(frame)``, computed once for all the clients of a run (recent frames kept)."""
        key = (frame.run_id, frame.seq, frame.id)
        data = self._encoded.get(key)
        if data is None:
            data = self._encoded[key] = encode(frame)
            if len(self._encoded) > _ENCODED_KEPT:
                self._encoded.popitem(last=False)
        return data

    def _join(self, run_id: str, *, progress: bool) -> _Mailbox:
        pump = self._pumps.get(run_id)
        if pump is None:
            pump = self._pumps[run_id] = _Pump(self.runtime, run_id)
        mailbox = _Mailbox(self.buffer, progress=progress)
        pump.mailboxes.add(mailbox)
        return mailbox

    def _leave(self, run_id: str, mailbox: _Mailbox) -> None:
        pump = self._pumps.get(run_id)
        if pump is None:
            return
        pump.mailboxes.discard(mailbox)
        if not pump.mailboxes:
            pump.stop(self.runtime, run_id)
            del self._pumps[run_id]

    async def events(
        self, run_id: str, *, after_seq: int = 0, deltas: bool = False, progress: bool = False
    ) -> AsyncIterator[Frame | TokenDelta | RunProgress]:
        """Each frame with seq > ``after_seq`` exactly once and in order (and, with ``deltas``,
        model text as it streams); ends when the run is completed, failed, cancelled or deleted.
        With ``progress``, a ``RunProgress`` first and on every change of the run's status,
        step count or question, each after the frames that brought it."""
        store = self.runtime.store
        mailbox = self._join(run_id, progress=progress)  # before reading the store
        shown: RunProgress | None = None
        try:
            last = after_seq
            from_store = True
            while True:
                if from_store:
                    page = store.read_frames(run_id, after_seq=last, limit=_PAGE)
                    for frame in page:
                        last = frame.seq
                        yield frame
                    if len(page) == _PAGE:
                        continue
                    run = store.get_run(run_id)
                    if run.last_seq > last:
                        continue
                    now = RunProgress.of(run)
                    if progress and now.changed_from(shown):
                        shown = now
                        yield now
                    if run.status in TERMINAL_STATUSES or run.status == RunStatus.DELETED:
                        return
                    from_store = False
                taken = await mailbox.take(self.poll_s)
                if taken is None:
                    # Quiet: another process (a worker, the CLI) may be running the run, and
                    # its frames reach only the store.
                    from_store = True
                    continue
                items, from_store = taken
                for item in items:
                    if item is None:
                        from_store = True  # a stretch ended: look at the run's status
                    elif isinstance(item, RunProgress):
                        # read after the frames before it, but later ones may be committed
                        # already: it is sent once those are (with the next batch's progress)
                        if item.last_seq == last and item.changed_from(shown):
                            shown = item
                            yield item
                    elif isinstance(item, TokenDelta):
                        if deltas:
                            yield item
                    elif item.seq == last + 1:
                        last = item.seq
                        yield item
                        if isinstance(item, StatusChanged) and item.to_status in _TERMINAL:
                            from_store = True
                    elif item.seq > last + 1:
                        from_store = True  # missed some: the store has them
                        break
        finally:
            self._leave(run_id, mailbox)
