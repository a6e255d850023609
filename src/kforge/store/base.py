"""The run log: the ``RunLog`` protocol and the records it keeps (runs, frames, step deltas,
snapshots, leases). The passage store is its own protocol (``kforge.store.passages``)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from kforge.errors import StateCorruptionError
from kforge.frames import Frame
from kforge.frames.slots import built_by_slots
from kforge.jsoncodec import loads
from kforge.store.documents import DocumentStore
from kforge.store.lease import Lease, lease_is_live

__all__ = [
    "TERMINAL_STATUSES",
    "UPDATABLE_RUN_FIELDS",
    "CommitListening",
    "RunLog",
    "RunRecord",
    "RunStatus",
    "Snapshot",
    "StepRecord",
    "run_with_snapshot",
]


class RunStatus(enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    AWAITING_USER = "awaiting_user"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    DELETED = "deleted"


UPDATABLE_RUN_FIELDS = frozenset(
    {
        "status",
        "iteration",
        "max_iterations",
        "pause_reason",
        "pending_interaction",
        "result",
        "error",
        "input",
    }
)
"""Run fields ``RunLog.commit(run_fields=...)`` may change; the rest are fixed at creation."""

TERMINAL_STATUSES = frozenset(
    {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.DELETED}
)


@dataclass(slots=True)
class RunRecord:
    """One row of the runs table: one agent execution."""

    id: str
    agent_type: str
    status: RunStatus
    created_at: datetime
    updated_at: datetime
    input: dict[str, Any] = field(default_factory=dict)
    """What the run was started with; enough to rebuild the agent in another process."""
    session_id: str | None = None
    parent_id: str | None = None
    iteration: int = 0
    """Committed steps."""
    max_iterations: int = 0
    pause_reason: str | None = None
    pending_interaction: dict[str, Any] | None = None
    """The InteractionRequested frame (as JSON) the run is waiting on."""
    result: dict[str, Any] | None = None
    error: str | None = None
    forked_from: str | None = None
    forked_at_seq: int | None = None
    last_seq: int = 0
    lease_owner: str | None = None
    """The writer executing the run now (``host:pid:token``), or None."""
    lease_expires_at: float | None = None
    """When that writer's lease lapses unless renewed (Unix seconds)."""
    heartbeat_at: float | None = None
    """When the writer last renewed its lease (Unix seconds)."""

    def is_live(self) -> bool:
        """Whether a writer that may still commit holds the run (else a running run was
        interrupted and can be resumed)."""
        return lease_is_live(self.lease_owner, self.lease_expires_at)


@built_by_slots
@dataclass(frozen=True, slots=True)
class StepRecord:
    """A committed step: which frames it ended with and how it changed the state."""

    step: int
    seq: int
    """The last frame seq committed with this step."""
    delta: list[list[Any]]
    """Operations that turn the previous step's state into this one's (see engine.state)."""


class Snapshot:
    """A run's whole state as of a committed step: ``Snapshot(step, seq, state)``.

    A snapshot a store read for a resume (``Snapshot.from_json``) holds the state's JSON as
    read, its checksum already checked, and decodes it only when ``state`` is first read: a
    resume may read it its own way from ``data`` instead. Snapshots do not change once made;
    two are equal when their step, seq and state are.
    """

    __slots__ = ("_state", "data", "seq", "step", "text")

    step: int
    seq: int
    """The last frame seq committed with that step."""
    text: str | None
    """The state's JSON as the store read it, when it has it (spares the runner an encode)."""
    data: bytes | None
    """The same JSON as UTF-8, in a snapshot ``Snapshot.from_json`` made: for a reader that
    reads it its own way (a resume reads a history of messages straight into messages)."""
    _state: dict[str, Any] | None
    """The state, once decoded (None until then in a snapshot ``from_json`` made)."""

    def __init__(
        self,
        step: int,
        seq: int,
        state: dict[str, Any],
        text: str | None = None,
        data: bytes | None = None,
    ) -> None:
        for name, value in (
            ("step", step),
            ("seq", seq),
            ("_state", state),
            ("text", text),
            ("data", data),
        ):
            object.__setattr__(self, name, value)

    @classmethod
    def from_json(cls, step: int, seq: int, data: bytes, text: str) -> Snapshot:
        """A snapshot of the state whose JSON a store read and checked (``text``, and ``data``
        its UTF-8), not decoded until ``state`` is first read."""
        snapshot = cls.__new__(cls)
        for name, value in (
            ("step", step),
            ("seq", seq),
            ("_state", None),
            ("text", text),
            ("data", data),
        ):
            object.__setattr__(snapshot, name, value)
        return snapshot

    @property
    def state(self) -> dict[str, Any]:
        """The state; in a snapshot ``from_json`` made, decoded from ``data`` when first read
        (then kept), StateCorruptionError when that JSON is not an object."""
        state = self._state
        if state is None:
            state = self._decode()
            object.__setattr__(self, "_state", state)
        return state

    def _decode(self) -> dict[str, Any]:
        try:
            state = loads(self.data if self.data is not None else (self.text or ""))
        except (ValueError, TypeError) as exc:
            raise StateCorruptionError(f"step {self.step}'s snapshot is unreadable: {exc}") from exc
        if not isinstance(state, dict):
            raise StateCorruptionError(f"step {self.step}'s snapshot is not an object")
        return state

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Snapshot does not change (cannot assign to '{name}')")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Snapshot does not change (cannot delete '{name}')")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Snapshot)
        return (self.step, self.seq, self.state) == (other.step, other.seq, other.state)

    __hash__ = None  # type: ignore[assignment]  # equal by its state, a dict

    def __repr__(self) -> str:
        return f"Snapshot(step={self.step!r}, seq={self.seq!r}, state={self.state!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Snapshot, (self.step, self.seq, self.state, self.text))


class RunLog(DocumentStore, Protocol):
    """Durable record of runs: what the runtime and the engine read and write. Every write
    method is one transaction. Its documents (``DocumentStore``) hold what the runtime keeps
    beside the runs (interventions waiting for a step boundary, workers, episodic memory)."""

    def create_run(
        self, run: RunRecord, frames: Sequence[Frame] = (), *, step: StepRecord | None = None
    ) -> None:
        """Create ``run`` with its first frames and its initial state (``step``), at once."""
        ...

    def get_run(self, run_id: str) -> RunRecord:
        """Raises RunNotFoundError."""
        ...

    def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        parent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[RunRecord]: ...

    def commit(
        self,
        run_id: str,
        frames: Sequence[Frame],
        *,
        step: StepRecord | None = None,
        snapshot: Snapshot | None = None,
        run_fields: dict[str, Any] | None = None,
        lease: Lease | None = None,
        repeatable: bool = False,
    ) -> None:
        """Append frames, a step delta, a snapshot and run field changes in one transaction.

        Frame seqs must continue the run's log without gaps (else WriteConflictError). With
        ``lease``, the transaction first claims or renews the run's lease for its owner (or
        releases it): RunLeasedError, and nothing written, while another live writer holds it.

        ``repeatable``: the frames record work a re-executed step may do again (a model's
        reply, committed before it is used so that a killed run does not ask again). The
        store may then return before the commit reaches the disk: it is visible at once and
        survives this process, and the next commit that waits for the disk makes it durable
        too, but a crash of the database server or its machine in between loses it (never a
        later commit without it), and a resumed run does that work again. Run fields may go
        with it: a stretch's opening (its "running" status and claim, an answer nobody waits
        to see durable), which such a crash undoes with it, leaving the run as it was before.
        """
        ...

    def renew_lease(self, run_id: str, lease: Lease) -> bool:
        """Extend ``lease`` (the heartbeat), or give it up if ``lease.release``; False if its
        owner no longer holds the run."""
        ...

    def read_frames(
        self, run_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[Frame]: ...

    def read_steps(
        self, run_id: str, *, after_step: int = 0, limit: int | None = None
    ) -> list[StepRecord]:
        """Step records after ``after_step``, oldest first: new objects the caller may keep and
        change (a resume builds the agent's state out of them)."""
        ...

    def latest_snapshot(self, run_id: str) -> Snapshot | None:
        """The newest snapshot, or None; raises StateCorruptionError if it cannot be read."""
        ...

    def get_run_with_snapshot(self, run_id: str) -> tuple[RunRecord, Snapshot | None]:
        """The run and its newest snapshot, read together (in one round trip where the store
        has round trips): what a resume reads first. A snapshot that cannot be read comes back
        as None (or, read lazily, ``Snapshot.from_json``, raises StateCorruptionError when its
        state is first read), so that the resume rebuilds the state from the step deltas
        instead. Raises RunNotFoundError."""
        ...

    def fork_run(self, source_id: str, new_run: RunRecord, *, upto_seq: int) -> None:
        """Create ``new_run`` holding copies of the source's frames and steps up to ``upto_seq``."""
        ...

    def run_ids_with_prefix(self, prefix: str, *, limit: int = 10) -> list[str]:
        """Ids of runs that start with ``prefix``, sorted, at most ``limit``."""
        ...

    def delete_runs(self, run_ids: Iterable[str]) -> None:
        """Delete runs with their frames, steps and snapshots, in one transaction."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class CommitListening(Protocol):
    """A store shared by processes that tells each of them about every commit (PostgreSQL)."""

    def listen(self, on_notice: Callable[[str | None, int], None]) -> Callable[[], None]:
        """Call ``on_notice(run_id, last_seq)`` for each commit (``(None, 0)``: anything may
        have changed) until the returned function is called."""
        ...


def run_with_snapshot(store: RunLog, run_id: str) -> tuple[RunRecord, Snapshot | None]:
    """``store.get_run`` and ``store.latest_snapshot`` as ``RunLog.get_run_with_snapshot``
    returns them, for run logs where they are two reads (hold the store's lock around it)."""
    run = store.get_run(run_id)
    try:
        return run, store.latest_snapshot(run_id)
    except StateCorruptionError:
        return run, None
